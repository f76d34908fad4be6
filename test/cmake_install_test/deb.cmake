# SPDX-License-Identifier: BSL-1.0
# The .deb that `cpack -G DEB` makes of a build tree: its control fields, its files unpacked into
# a scratch root (dpkg-deb -x, as dpkg would lay them out under /), the redlock command from it,
# and the consumers built against it (consumers.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/consumers.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CPACK_COMMAND} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR}/package
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cpack -G DEB failed (${rc}): ${out}")
endif()
file(GLOB debs ${WORK_DIR}/package/*.deb)
list(LENGTH debs count)
if(NOT count EQUAL 1)
    message(FATAL_ERROR "expected one .deb in ${WORK_DIR}/package, found ${count}: ${debs}")
endif()

foreach(field Package Version Depends)
    execute_process(COMMAND dpkg-deb --field ${debs} ${field} OUTPUT_VARIABLE value
        OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0 OR value STREQUAL "")
        message(FATAL_ERROR "the .deb has no ${field} field")
    endif()
    message(STATUS "${field}: ${value}")
endforeach()

set(root ${WORK_DIR}/root)
execute_process(COMMAND dpkg-deb -x ${debs} ${root} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -x failed: ${rc}")
endif()
foreach(file bin/redlock include/redlock/redlock.hpp ${LIBDIR}/libredlock.a ${LIBDIR}/pkgconfig/redlock.pc
        ${LIBDIR}/cmake/redlock/redlockConfig.cmake share/doc/redlock-asio/copyright)
    if(NOT EXISTS ${root}/usr/${file})
        message(FATAL_ERROR "the .deb lacks /usr/${file}")
    endif()
endforeach()
# Its licence: the Boost Software License 1.0, whole, in Debian's machine-readable format.
file(READ ${root}/usr/share/doc/redlock-asio/copyright copyright)
foreach(part "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" "License: BSL-1.0"
        "\n Boost Software License - Version 1.0 - August 17th, 2003\n .\n Permission is hereby granted"
        "\n DEALINGS IN THE SOFTWARE.\n")
    string(FIND "${copyright}" "${part}" at)
    if(at EQUAL -1)
        message(FATAL_ERROR "the .deb's copyright file lacks \"${part}\":\n${copyright}")
    endif()
endforeach()
execute_process(COMMAND ${root}/usr/bin/redlock --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "usage: redlock")
    message(FATAL_ERROR "the packaged redlock command answered --help with ${rc}: ${out}")
endif()
check_consumers(${root}/usr ${LIBDIR} ${WORK_DIR})
