// SPDX-License-Identifier: BSL-1.0
#include "fault/chaos/history.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <stdexcept>

namespace redlock::chaos {

using json = nlohmann::json;

nanos to_ns(std::chrono::steady_clock::time_point t) noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

nanos now_ns() noexcept {
    return to_ns(std::chrono::steady_clock::now());
}

// The JSON members are the fields' names.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(hold_record, worker, coroutine, resource, kind, token, fence, invoked,
                                   acquired, ended, valid_until, granted_until, ttl_ms, promised_ms, outcome,
                                   granted, quorum, holders_allowed, handed_from, lineage)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(failure_record, worker, resource, kind, invoked, completed, error)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(write_record, worker, resource, token, fence, invoked, completed,
                                   valid_until, accepted)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(reentry_record, worker, resource, token, outer_fence, inner_fence,
                                   completed, outer_valid_until, error)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(worker_summary, worker, scopes_started, scopes_ended, watchdogs_running,
                                   watchdog_renewals, extends, leases_lost, handovers, adoptions)

namespace {

template <class Record>
std::string typed_line(const char* type, const Record& r) {
    json j = r;
    j["type"] = type;
    return j.dump();
}

void add_record(const json& j, history& into) {
    const auto type = j.at("type").get<std::string>();
    if (type == "hold") {
        into.holds.push_back(j.get<hold_record>());
    } else if (type == "failure") {
        into.failures.push_back(j.get<failure_record>());
    } else if (type == "write") {
        into.writes.push_back(j.get<write_record>());
    } else if (type == "reentry") {
        into.reentries.push_back(j.get<reentry_record>());
    } else if (type == "summary") {
        into.summaries.push_back(j.get<worker_summary>());
    } else {
        throw std::invalid_argument("unknown record type " + type);
    }
}

}  // namespace

std::string to_json_line(const hold_record& r) {
    return typed_line("hold", r);
}

std::string to_json_line(const failure_record& r) {
    return typed_line("failure", r);
}

std::string to_json_line(const write_record& r) {
    return typed_line("write", r);
}

std::string to_json_line(const reentry_record& r) {
    return typed_line("reentry", r);
}

std::string to_json_line(const worker_summary& r) {
    return typed_line("summary", r);
}

void read_history_file(const std::string& path, history& into, std::size_t& bad_lines) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        try {
            add_record(json::parse(line), into);
        } catch (const std::exception&) {
            ++bad_lines;
        }
    }
}

}  // namespace redlock::chaos
