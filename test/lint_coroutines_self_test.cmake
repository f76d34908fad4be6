# SPDX-License-Identifier: BSL-1.0
# lint_coroutines.cmake must fail on what it is for and pass on what replaces it: it is run on
# scratch trees with a co_await in an arm of a conditional operator, on one line and over
# several, and on the if/else that a fix writes instead.
#   cmake -DLINT=.../lint_coroutines.cmake -DSCRATCH=<dir> -P lint_coroutines_self_test.cmake
if(NOT LINT OR NOT SCRATCH)
    message(FATAL_ERROR "usage: cmake -DLINT=<lint_coroutines.cmake> -DSCRATCH=<dir> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
file(REMOVE_RECURSE ${SCRATCH})
file(WRITE ${SCRATCH}/one_line/src/a.cpp "auto v = ready ? co_await fast() : co_await slow();\n")
file(WRITE ${SCRATCH}/two_lines/include/a.hpp "auto v = ready ? cached\n               : co_await slow();\n")
file(WRITE ${SCRATCH}/if_else/src/a.cpp
     "if (ready) v = co_await fast();\nelse v = co_await slow();\nauto w = ready ? a : b;\n")

function(lint tree expect_failure)
    execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${SCRATCH}/${tree} -P ${LINT}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(expect_failure AND (rc EQUAL 0 OR NOT err MATCHES "conditional operator"))
        message(FATAL_ERROR "the coroutine lint passed ${tree}, which has a co_await in a conditional:\n${out}${err}")
    endif()
    if(NOT expect_failure AND NOT rc EQUAL 0)
        message(FATAL_ERROR "the coroutine lint failed ${tree}, which has none:\n${out}${err}")
    endif()
endfunction()

lint(one_line TRUE)
lint(two_lines TRUE)
lint(if_else FALSE)
message(STATUS "the coroutine lint fails both conditionals and passes the if/else")
