# SPDX-License-Identifier: BSL-1.0
# The .debs that `cpack -G DEB` makes, split as Debian splits a library: of this build tree (the
# static library) libredlock-dev and redlock (the command); of a shared build of the same objects
# (OBJECTS_FROM, as shared.cmake links it) libredlock<major.minor> and its libredlock-dev. Each
# package's control fields (Depends computed from its binaries by dpkg-shlibdeps), its files
# unpacked into a scratch root of its own (dpkg-deb -x, as dpkg would lay them out under /), the
# command run from its root alone, and the consumers (consumers.cmake) built against each
# library's packages.
include(${CMAKE_CURRENT_LIST_DIR}/consumers.cmake)
file(REMOVE_RECURSE ${WORK_DIR})

# The .debs cpack makes of `tree`, in `out`: named "<package>_<version>_<arch>.deb".
function(make_debs tree out expected)
    execute_process(COMMAND ${CPACK_COMMAND} -G DEB --config ${tree}/CPackConfig.cmake -B ${out}
        RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "cpack -G DEB in ${tree} failed (${rc}): ${log}")
    endif()
    file(GLOB debs RELATIVE ${out} ${out}/*.deb)
    set(names "")
    foreach(deb IN LISTS debs)
        string(REGEX REPLACE "_.*" "" name ${deb})
        list(APPEND names ${name})
    endforeach()
    list(SORT names)
    if(NOT names STREQUAL "${expected}")
        message(FATAL_ERROR "cpack in ${tree} made ${debs}, expected the packages ${expected}")
    endif()
endfunction()

# `package`'s .deb in `dir`: its Depends must hold each of `wanted` and none of `unwanted`
# (regular expressions); unpacked into `root`, it must hold `files` (under /usr) and none of
# `absent`.
function(check_deb dir package root)
    cmake_parse_arguments(PARSE_ARGV 3 arg "" "" "DEPENDS;NOT_DEPENDS;FILES;ABSENT")
    file(GLOB deb ${dir}/${package}_*.deb)
    execute_process(COMMAND dpkg-deb --field ${deb} Depends OUTPUT_VARIABLE depends
        OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "dpkg-deb --field ${deb} failed: ${rc}")
    endif()
    message(STATUS "${package} Depends: ${depends}")
    foreach(want IN LISTS arg_DEPENDS)
        if(NOT depends MATCHES "${want}")
            message(FATAL_ERROR "${package} does not depend on ${want}: Depends: ${depends}")
        endif()
    endforeach()
    foreach(unwanted IN LISTS arg_NOT_DEPENDS)
        if(depends MATCHES "${unwanted}")
            message(FATAL_ERROR "${package} depends on ${unwanted}: Depends: ${depends}")
        endif()
    endforeach()
    execute_process(COMMAND dpkg-deb -x ${deb} ${root} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "dpkg-deb -x ${deb} failed: ${rc}")
    endif()
    foreach(file IN LISTS arg_FILES)
        if(NOT EXISTS ${root}/usr/${file})
            message(FATAL_ERROR "${package} lacks /usr/${file}")
        endif()
    endforeach()
    foreach(file IN LISTS arg_ABSENT)
        file(GLOB found ${root}/usr/${file})
        if(found)
            message(FATAL_ERROR "${package} has ${found}")
        endif()
    endforeach()
    # Its licence: the Boost Software License 1.0, whole, in Debian's machine-readable format.
    file(READ ${root}/usr/share/doc/${package}/copyright copyright)
    foreach(part "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" "License: BSL-1.0"
            "\n Boost Software License - Version 1.0 - August 17th, 2003\n .\n Permission is hereby granted"
            "\n DEALINGS IN THE SOFTWARE.\n")
        string(FIND "${copyright}" "${part}" at)
        if(at EQUAL -1)
            message(FATAL_ERROR "${package}'s copyright file lacks \"${part}\":\n${copyright}")
        endif()
    endforeach()
endfunction()

set(headers include/redlock/redlock.hpp ${LIBDIR}/pkgconfig/redlock.pc ${LIBDIR}/cmake/redlock/redlockConfig.cmake)

# This tree: the static library in -dev, and the command, which needs no package of ours nor any
# -dev package, only the shared libraries it links (libssl3 among them, computed).
make_debs(${BUILD_DIR} ${WORK_DIR}/static "libredlock-dev;redlock")
check_deb(${WORK_DIR}/static redlock ${WORK_DIR}/command_root
    DEPENDS "libc6" "libssl3" NOT_DEPENDS "-dev" "libredlock"
    FILES bin/redlock ABSENT "include" "${LIBDIR}")
execute_process(COMMAND ${WORK_DIR}/command_root/usr/bin/redlock --help
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "usage: redlock")
    message(FATAL_ERROR "the packaged redlock command answered --help with ${rc}: ${out}")
endif()
check_deb(${WORK_DIR}/static libredlock-dev ${WORK_DIR}/static_root
    DEPENDS "^libssl-dev, libboost1.81-dev$"
    FILES ${headers} ${LIBDIR}/libredlock.a ABSENT "bin" "${LIBDIR}/libredlock.so*")
check_consumers(${WORK_DIR}/static_root/usr ${LIBDIR} ${WORK_DIR}/static_consumers)

# A shared build of the same objects (linking only): the library alone in its runtime package,
# which -dev depends on at this very version.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/shared_tree -G ${GENERATOR}
        -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON
        -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_EXAMPLES=OFF -DREDLOCK_BUILD_BENCH=OFF -DREDLOCK_BUILD_TOOLS=OFF
        -DREDLOCK_OBJECTS_FROM=${OBJECTS_FROM}
    RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the shared build failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/shared_tree RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building the shared library failed: ${rc}")
endif()
set(runtime libredlock${MAJOR_MINOR})
make_debs(${WORK_DIR}/shared_tree ${WORK_DIR}/shared "libredlock-dev;${runtime}")
set(shared_root ${WORK_DIR}/shared_root)
check_deb(${WORK_DIR}/shared ${runtime} ${shared_root}
    DEPENDS "libc6" "libssl3" "libstdc\\+\\+6" NOT_DEPENDS "-dev"
    FILES ${LIBDIR}/libredlock.so.${MAJOR_MINOR} ABSENT "include" "bin" "${LIBDIR}/libredlock.so" "${LIBDIR}/*.a")
check_deb(${WORK_DIR}/shared libredlock-dev ${shared_root}
    DEPENDS "^${runtime} \\(= ${VERSION}\\), libssl-dev, libboost1.81-dev$"
    FILES ${headers} ${LIBDIR}/libredlock.so ABSENT "bin" "${LIBDIR}/*.a")
check_consumers(${shared_root}/usr ${LIBDIR} ${WORK_DIR}/shared_consumers)
