# SPDX-License-Identifier: BSL-1.0
# Fails if a pure piece of src/lock includes Asio, directly or through any header it pulls in
# (system headers too: the compiler lists every file it reads, by -M). The pure pieces decide;
# only their executors do I/O and read the clock.
#   cmake -DCXX=<compiler> -DSOURCE_DIR=... -DBINARY_DIR=... -DPIECES="acquire/acquire_fsm;..."
#         -P lint_pure_pieces.cmake
if(NOT CXX OR NOT SOURCE_DIR OR NOT BINARY_DIR OR NOT PIECES)
    message(FATAL_ERROR "usage: cmake -DCXX=... -DSOURCE_DIR=... -DBINARY_DIR=... -DPIECES=... -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
set(impure "")
foreach(piece IN LISTS PIECES)
    execute_process(
        COMMAND ${CXX} -std=c++20 -M -I${SOURCE_DIR}/include -I${SOURCE_DIR}/src -I${BINARY_DIR}/generated
                ${SOURCE_DIR}/src/lock/${piece}.cpp
        RESULT_VARIABLE rc OUTPUT_VARIABLE deps ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "could not list what src/lock/${piece}.cpp includes:\n${err}")
    endif()
    if(deps MATCHES "boost/asio")
        string(APPEND impure "src/lock/${piece}.cpp\n")
    endif()
endforeach()
if(impure)
    message(FATAL_ERROR "Asio is included by a piece that must be pure:\n${impure}")
endif()
list(LENGTH PIECES count)
message(STATUS "${count} pure pieces of src/lock, none includes Asio")
