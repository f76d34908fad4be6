# SPDX-License-Identifier: BSL-1.0
# Builds the library and the examples with clang and -Werror: our code must be warning-free on
# both compilers. The tests themselves are built with the main compiler. Unoptimised: clang's
# warnings come from its front end, the same at any -O, and -O0 builds in about half the time.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR} -G ${GENERATOR}
        -DCMAKE_CXX_COMPILER=${CLANGXX} -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DREDLOCK_WERROR=ON
        -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_BENCH=OFF -DREDLOCK_BUILD_EXAMPLES=ON -DREDLOCK_INSTALL=OFF
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring with clang failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the clang build failed: ${rc}")
endif()
