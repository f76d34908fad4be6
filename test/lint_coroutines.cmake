# SPDX-License-Identifier: BSL-1.0
# Fails if a co_await sits in an arm of a conditional operator anywhere in our sources: GCC 12
# and 13 (and clang before 16) miscompile `c ? co_await a : co_await b` (a chaos run caught the
# garbage it made of a lease). Write an if/else instead.
#   cmake -DSOURCE_DIR=... -P lint_coroutines.cmake
file(GLOB_RECURSE sources
    ${SOURCE_DIR}/include/*.hpp ${SOURCE_DIR}/src/*.cpp ${SOURCE_DIR}/src/*.hpp
    ${SOURCE_DIR}/test/*.cpp ${SOURCE_DIR}/test/*.hpp ${SOURCE_DIR}/tools/*.cpp ${SOURCE_DIR}/tools/*.hpp
    ${SOURCE_DIR}/examples/*.cpp ${SOURCE_DIR}/examples/*.hpp ${SOURCE_DIR}/bench/*.cpp ${SOURCE_DIR}/bench/*.hpp)
set(found "")
foreach(f IN LISTS sources)
    file(STRINGS ${f} lines REGEX "\\?[ \t]*co_await|^[ \t]*:[ \t]*co_await")
    foreach(line IN LISTS lines)
        string(APPEND found "${f}: ${line}\n")
    endforeach()
endforeach()
if(found)
    message(FATAL_ERROR "co_await inside a conditional operator (miscompiled by GCC 12):\n${found}")
endif()
message(STATUS "no co_await inside a conditional operator in ${SOURCE_DIR}")
