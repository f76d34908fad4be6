// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_BENCH_PROCESS_CPU_HPP
#define REDLOCK_BENCH_PROCESS_CPU_HPP

// The CPU a benchmark's own process spent (user + system), so that its report can give the
// client's CPU per operation beside the servers' (issue 23 compares ours with a bare client's).

#include <sys/resource.h>

namespace bench {

/// Seconds of CPU this process has used so far, all threads.
inline double process_cpu_seconds() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    const auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace bench

#endif
