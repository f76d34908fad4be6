# SPDX-License-Identifier: BSL-1.0
# check_consumers(PREFIX LIBDIR WORK): builds and runs this directory's consumer against an
# installed redlock under PREFIX (its libraries in PREFIX/LIBDIR), in WORK: once through
# find_package (CMakeLists.txt here), once with the flags of the installed redlock.pc alone, as a
# Makefile or Meson build would take them. Needs SOURCE_DIR, GENERATOR and CXX_COMPILER set.
function(check_consumers prefix libdir work)
    execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/test/cmake_install_test -B ${work}/build
            -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix}
            -DCMAKE_BUILD_TYPE=Release
        RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "configuring the consumer failed: ${rc}")
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} --build ${work}/build RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "building the consumer failed: ${rc}")
    endif()
    # A shared libredlock is found by the consumer's RPATH (CMake sets it for an imported library).
    execute_process(COMMAND ${work}/build/consumer RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "the consumer failed: ${rc}")
    endif()

    find_program(PKG_CONFIG NAMES pkg-config pkgconf)
    if(NOT PKG_CONFIG)
        message(FATAL_ERROR "pkg-config not found (scripts/setup installs pkgconf)")
    endif()
    # Only the installed file: the system's own search path is left out.
    execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=PKG_CONFIG_PATH
            PKG_CONFIG_LIBDIR=${prefix}/${libdir}/pkgconfig ${PKG_CONFIG} --cflags --libs redlock
        OUTPUT_VARIABLE pc_flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "pkg-config --cflags --libs redlock failed: ${rc}")
    endif()
    string(FIND "${pc_flags}" "-I${prefix}/" include_at)
    string(FIND "${pc_flags}" "-lredlock" lib_at)
    if(include_at EQUAL -1 OR lib_at EQUAL -1)
        message(FATAL_ERROR "pkg-config gave flags that do not point into ${prefix}: ${pc_flags}")
    endif()
    separate_arguments(pc_flag_list UNIX_COMMAND "${pc_flags}")
    execute_process(COMMAND ${CXX_COMPILER} -std=c++20 ${SOURCE_DIR}/test/cmake_install_test/main.cpp
            ${pc_flag_list} -o ${work}/pc_consumer
        RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "building the consumer with pkg-config's flags (${pc_flags}) failed: ${rc}")
    endif()
    # pkg-config's flags give no RPATH: a shared libredlock outside the system's paths is found
    # as a Makefile's user would find it.
    execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/${libdir} ${work}/pc_consumer
        RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "the consumer built with pkg-config's flags failed: ${rc}")
    endif()
endfunction()
