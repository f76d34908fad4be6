# SPDX-License-Identifier: BSL-1.0
# lint_kind_names.cmake must fail on what it is for and pass on what it leaves alone: it is run
# on scratch trees that name a kind in code outside kinds/ (a field, part of an identifier, a
# line with a ';' in a string before the name), and on trees that name one only in a comment, a
# message, an error code, or inside kinds/.
#   cmake -DLINT=.../lint_kind_names.cmake -DSCRATCH=<dir> -P lint_kind_names_self_test.cmake
if(NOT LINT OR NOT SCRATCH)
    message(FATAL_ERROR "usage: cmake -DLINT=<lint_kind_names.cmake> -DSCRATCH=<dir> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
file(REMOVE_RECURSE ${SCRATCH})
file(WRITE ${SCRATCH}/field/src/lock/acquire/a.cpp "int f(const lock_options& o) {\n    if (o.fair) return 1;\n    return 0;\n}\n")
file(WRITE ${SCRATCH}/part_of_name/src/lock/lease/a.hpp "class x {\n    bool queue_head_, is_semaphore_;\n};\n")
file(WRITE ${SCRATCH}/after_string/src/lock/admin/a.cpp "auto s = \"a;b\"; auto w = writers.size();\n")
file(WRITE ${SCRATCH}/prose/src/lock/acquire/a.cpp
     "// a fair waiter's place\n/// the reentrant hold\n   * a semaphore's permits\nauto m = \"the writer: fair\"; // reader\nif (ec == error::permits_mismatch) f();\n")
file(WRITE ${SCRATCH}/in_kinds/src/lock/kinds/fair.cpp "bool fair_queue(const lock_options& o) { return o.fair; }\n")

function(lint tree expect_failure)
    execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${SCRATCH}/${tree} -P ${LINT}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(expect_failure AND (rc EQUAL 0 OR NOT err MATCHES "a kind named outside"))
        message(FATAL_ERROR "the kind-name lint passed ${tree}, which names a kind in code:\n${out}${err}")
    endif()
    if(NOT expect_failure AND NOT rc EQUAL 0)
        message(FATAL_ERROR "the kind-name lint failed ${tree}, which names none in code outside kinds/:\n${out}${err}")
    endif()
endfunction()

lint(field TRUE)
lint(part_of_name TRUE)
lint(after_string TRUE)
lint(prose FALSE)
lint(in_kinds FALSE)
message(STATUS "the kind-name lint fails a kind named in code and passes comments, messages, error codes and kinds/")
