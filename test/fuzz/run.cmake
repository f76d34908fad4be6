# Builds the fuzz target with clang and runs it for a bounded time on a copy of the seed corpus
# (the copy grows run to run inside the build tree; the seeds stay as committed).
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
execute_process(COMMAND ${WORK_DIR}/build/resp_parser_fuzz -max_total_time=${SECONDS} -rss_limit_mb=2048
        -print_final_stats=1 ${WORK_DIR}/corpus ${SOURCE_DIR}/test/fuzz/corpus
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the fuzzer found a failure (exit ${rc}); the crashing input is in the working directory")
endif()
