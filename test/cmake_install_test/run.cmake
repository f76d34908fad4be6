# SPDX-License-Identifier: BSL-1.0
# Installs the build tree into a temp prefix, then builds and runs the consumers against it
# (consumers.cmake: by find_package and by pkg-config).
include(${CMAKE_CURRENT_LIST_DIR}/consumers.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install failed: ${rc}")
endif()
check_consumers(${WORK_DIR}/prefix ${LIBDIR} ${WORK_DIR})
