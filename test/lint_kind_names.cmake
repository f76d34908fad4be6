# SPDX-License-Identifier: BSL-1.0
# Fails if the code of a file of src/lock outside src/lock/kinds/ names a kind of lock: what
# differs between kinds is asked of the kind (lock_kind) as behaviour, so that a new kind is one
# kind file, its scripts, a factory line and its tests. Comments, string literals (messages) and
# error codes (error::...) are not code that branches on a kind, and are left out.
#   cmake -DSOURCE_DIR=... -P lint_kind_names.cmake
set(names "fair|reentrant|semaphore|permits?|read_write|readers?|writers?")
file(GLOB_RECURSE sources ${SOURCE_DIR}/src/lock/*.cpp ${SOURCE_DIR}/src/lock/*.hpp)
set(found "")
set(count 0)
foreach(f IN LISTS sources)
    if(f MATCHES "/src/lock/kinds/")
        continue()
    endif()
    math(EXPR count "${count} + 1")
    # One list element per line: the text's own ';' and brackets would split or join them.
    file(READ ${f} text)
    string(REPLACE ";" "," text "${text}")
    string(REPLACE "[" "(" text "${text}")
    string(REPLACE "]" ")" text "${text}")
    string(REPLACE "\n" ";" lines "${text}")
    set(n 0)
    foreach(line IN LISTS lines)
        math(EXPR n "${n} + 1")
        # A string literal first: "//" in one is not a comment.
        string(REGEX REPLACE "\"([^\"\\\\]|\\\\.)*\"" "\"\"" code "${line}")
        string(REGEX REPLACE "//.*$" "" code "${code}")
        string(REGEX REPLACE "^[ \t]*\\*.*$" "" code "${code}")
        string(REGEX REPLACE "error::[A-Za-z_0-9]+" "" code "${code}")
        # A name as an identifier or a part of one between underscores: fair_, is_fair, o.fair.
        if(code MATCHES "(^|[^A-Za-z0-9])(${names})([^A-Za-z0-9]|$)")
            string(APPEND found "${f}:${n}: ${CMAKE_MATCH_2}: ${line}\n")
        endif()
    endforeach()
endforeach()
if(found)
    message(FATAL_ERROR "a kind named outside src/lock/kinds/ (ask the kind what it does instead):\n${found}")
endif()
message(STATUS "${count} files of src/lock outside kinds/, none names a kind")
