# SPDX-License-Identifier: BSL-1.0
# The shared library (-DBUILD_SHARED_LIBS=ON): built from this source tree in WORK_DIR, installed
# into a temp prefix; its SONAME, that it exports the public API and not the internals, and the
# consumers (consumers.cmake) built and run against it. With OBJECTS_FROM (a file of object
# paths), linked from the objects of the build that runs this test instead of compiling them again.
include(${CMAKE_CURRENT_LIST_DIR}/consumers.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/library -G ${GENERATOR}
        -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON
        -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_EXAMPLES=OFF -DREDLOCK_BUILD_BENCH=OFF -DREDLOCK_BUILD_TOOLS=OFF
        -DREDLOCK_OBJECTS_FROM=${OBJECTS_FROM}
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the shared build failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/library RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building the shared library failed: ${rc}")
endif()
set(prefix ${WORK_DIR}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${WORK_DIR}/library --prefix ${prefix} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "installing the shared build failed: ${rc}")
endif()

set(lib ${prefix}/${LIBDIR}/libredlock.so)
if(NOT EXISTS ${lib} OR EXISTS ${prefix}/${LIBDIR}/libredlock.a)
    message(FATAL_ERROR "expected libredlock.so and no libredlock.a in ${prefix}/${LIBDIR}")
endif()
execute_process(COMMAND readelf -d ${lib} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT dynamic MATCHES "Library soname: \\[libredlock\\.so\\.${MAJOR_MINOR}\\]")
    message(FATAL_ERROR "libredlock.so's SONAME is not libredlock.so.${MAJOR_MINOR}: ${dynamic}")
endif()

# Its dynamic symbols: the public API (what include/redlock marks REDLOCK_API), none of src/.
execute_process(COMMAND nm -D -C --defined-only ${lib} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm -D failed: ${rc}")
endif()
foreach(public "redlock::client::client(" "redlock::lease::~lease()" "redlock::error_category()"
        "redlock::metrics_snapshot::to_prometheus" "redlock::redis::connection::connection(")
    string(FIND "${symbols}" "${public}" at)
    if(at EQUAL -1)
        message(FATAL_ERROR "libredlock.so does not export ${public}")
    endif()
endforeach()
# (An instantiation of an Asio template that Asio exports may name our types: not ours to hide.)
foreach(internal "redlock::detail::acquire_op" "redlock::detail::node_health_board"
        "redlock::detail::client_state" "redlock::redis::detail::multiplexer" "redlock::redis::detail::cluster_link")
    if(symbols MATCHES "\n[0-9a-f]+ [A-Za-z] ((typeinfo|typeinfo name|vtable) for )?${internal}")
        message(FATAL_ERROR "libredlock.so exports an internal: ${CMAKE_MATCH_0}")
    endif()
endforeach()
string(REGEX MATCHALL "\n[0-9a-f]+ [TWVBDR] " exported "${symbols}")
list(LENGTH exported count)
message(STATUS "libredlock.so: SONAME libredlock.so.${MAJOR_MINOR}, ${count} symbols exported")

check_consumers(${prefix} ${LIBDIR} ${WORK_DIR})
execute_process(COMMAND readelf -d ${WORK_DIR}/pc_consumer OUTPUT_VARIABLE needed)
if(NOT needed MATCHES "Shared library: \\[libredlock\\.so\\.${MAJOR_MINOR}\\]")
    message(FATAL_ERROR "the consumer is not linked to libredlock.so.${MAJOR_MINOR}: ${needed}")
endif()
