# SPDX-License-Identifier: BSL-1.0
# Fails if a file of the library's sources (src/: C++ and Lua) is longer than LIMIT lines (500
# unless given): a longer file holds two concepts, and should be two files.
#   cmake -DSOURCE_DIR=... [-DLIMIT=500] -P lint_file_length.cmake
if(NOT DEFINED LIMIT)
    set(LIMIT 500)
endif()
file(GLOB_RECURSE sources ${SOURCE_DIR}/src/*.cpp ${SOURCE_DIR}/src/*.hpp ${SOURCE_DIR}/src/*.lua)
set(long "")
set(count 0)
foreach(f IN LISTS sources)
    # Every line, empty ones too (file(STRINGS) would skip them).
    file(READ ${f} text)
    string(REGEX MATCHALL "\n" newlines "${text}")
    list(LENGTH newlines lines)
    if(lines GREATER LIMIT)
        string(APPEND long "${f}: ${lines} lines\n")
    endif()
    math(EXPR count "${count} + 1")
endforeach()
if(long)
    message(FATAL_ERROR "over ${LIMIT} lines:\n${long}")
endif()
message(STATUS "${count} source files under src/, none over ${LIMIT} lines")
