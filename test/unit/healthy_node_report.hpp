// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_UNIT_HEALTHY_NODE_REPORT_HPP
#define REDLOCK_TEST_UNIT_HEALTHY_NODE_REPORT_HPP

#include "deployment_check.hpp"

#include <string>
#include <utility>

namespace redlock::test {

/// What `redlock check` learns from a server with nothing to report: a reachable Redis 7.0
/// master, no persistence, no eviction, its clock 1 s ahead of ours.
inline cli::node_report healthy_node(std::string name, std::string run_id) {
    cli::node_report r;
    r.name = std::move(name);
    r.reachable = true;
    r.run_id = std::move(run_id);
    r.version = "7.0.15";
    r.role = "master";
    r.aof = false;
    r.maxmemory = 0;
    r.maxmemory_policy = "noeviction";
    r.clock_offset_us = 1'000'000;
    r.clock_uncertainty_us = 50;
    return r;
}

}  // namespace redlock::test

#endif
