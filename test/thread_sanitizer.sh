#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Builds the tests that use more than one thread with ThreadSanitizer and runs them; any report
# fails the run. scripts/test --tsan runs both in build-tsan/; the plain ctest run has them as
# two tests in a tree of its own: thread_sanitizer_build (the build, at nice 19, beside the
# integration suite) and thread_sanitizer (the run, alone).
#
#   test/thread_sanitizer.sh SOURCE_DIR BUILD_DIR [build | run]
#
# What runs: a client shared by an io_context on four threads (lock_async_test), the watchdog's
# (watchdog_test), the fault proxy's thread of its own (tcp_proxy_test, lock_fault_test), callers
# on strands of their own that cancel requests while the connection completes them, and the
# stress test in small (two threads).
set -euo pipefail
source_dir=$1
build=$2
phase=${3:-both}
if [[ $phase != both && $phase != build && $phase != run ]]; then
    echo "thread_sanitizer.sh: the third argument is build or run, not '$phase'" >&2
    exit 2
fi

# -Wno-tsan: GCC 12 warns that TSan does not model the fences asio uses. -O1 with line tables:
# what a report needs, in about half the compile time of -O2 -g.
flags="-fsanitize=thread -fno-omit-frame-pointer -Wno-tsan"
if [[ $phase != run ]]; then
    cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DREDLOCK_INTEGRATION_TESTS=ON -DREDLOCK_WERROR=ON \
        -DREDLOCK_BUILD_BENCH=OFF -DREDLOCK_BUILD_EXAMPLES=OFF -DREDLOCK_BUILD_TOOLS=OFF \
        -DREDLOCK_INSTALL=OFF -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags"
    cmake --build "$build" --target threaded_tests stress
fi
[[ $phase != build ]] || exit 0

export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$source_dir/test/tsan_suppressions.txt}
# This libtsan maps its shadow memory at fixed addresses: without address randomisation a
# kernel with more mmap entropy cannot put a library where the shadow is.
norandom=(setarch "$(uname -m)" -R)
"${norandom[@]}" "$build/test/threaded_tests" --log_level=test_suite \
    --run_test='lock_async_test:watchdog_test:tcp_proxy_test:lock_fault_test:connection_suite/callers_on_other_strands_cancel_while_their_requests_complete'
"${norandom[@]}" "$build/test/stress" --seconds 6 --clients 20 --waiters 1000 --resources 10 --nodes 3
