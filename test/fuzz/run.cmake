# SPDX-License-Identifier: BSL-1.0
# Builds the fuzz target with clang and runs it for a bounded time. The corpus it grows is in the
# build tree (it grows run to run there); it also reads the committed seeds and, when CAPTURE
# names capture_replies, the replies a real redis-server sends, captured anew before each run.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/test/fuzz -B ${WORK_DIR}/build -G ${GENERATOR}
        -DCMAKE_CXX_COMPILER=${CLANGXX} -DCMAKE_BUILD_TYPE=RelWithDebInfo
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the fuzz target failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building the fuzz target failed: ${rc}")
endif()
file(MAKE_DIRECTORY ${WORK_DIR}/corpus)
set(seed_dirs ${SOURCE_DIR}/test/fuzz/corpus)
if(CAPTURE)
    file(REMOVE_RECURSE ${WORK_DIR}/real_replies)
    execute_process(COMMAND ${CAPTURE} ${WORK_DIR}/real_replies RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "capturing real replies failed: ${rc}")
    endif()
    list(APPEND seed_dirs ${WORK_DIR}/real_replies)
endif()
execute_process(COMMAND ${WORK_DIR}/build/resp_parser_fuzz -max_total_time=${SECONDS} -rss_limit_mb=2048
        -print_final_stats=1 ${WORK_DIR}/corpus ${seed_dirs}
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the fuzzer found a failure (exit ${rc}); the crashing input is in the working directory")
endif()
