#include "fault/chaos/history.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>

namespace redlock::chaos {

using json = nlohmann::json;

nanos now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::string to_json_line(const hold_record& r) {
    return json{{"type", "hold"},
                {"worker", r.worker},
                {"coroutine", r.coroutine},
                {"resource", r.resource},
                {"kind", r.kind},
                {"token", r.token},
                {"fence", r.fence},
                {"invoked", r.invoked},
                {"acquired", r.acquired},
                {"ended", r.ended},
                {"valid_until", r.valid_until},
                {"outcome", r.outcome}}
        .dump();
}

std::string to_json_line(const failure_record& r) {
    return json{{"type", "failure"}, {"worker", r.worker},   {"resource", r.resource},
                {"kind", r.kind},    {"invoked", r.invoked}, {"completed", r.completed},
                {"error", r.error}}
        .dump();
}

std::string to_json_line(const write_record& r) {
    return json{{"type", "write"},          {"worker", r.worker},
                {"resource", r.resource},   {"token", r.token},
                {"fence", r.fence},         {"invoked", r.invoked},
                {"completed", r.completed}, {"valid_until", r.valid_until},
                {"accepted", r.accepted}}
        .dump();
}

std::string to_json_line(const reentry_record& r) {
    return json{{"type", "reentry"}, {"worker", r.worker},           {"resource", r.resource},
                {"token", r.token},  {"outer_fence", r.outer_fence}, {"inner_fence", r.inner_fence},
                {"error", r.error}}
        .dump();
}

std::string to_json_line(const worker_summary& r) {
    return json{{"type", "summary"},
                {"worker", r.worker},
                {"scopes_started", r.scopes_started},
                {"scopes_ended", r.scopes_ended},
                {"watchdogs_running", r.watchdogs_running},
                {"watchdog_renewals", r.watchdog_renewals},
                {"leases_lost", r.leases_lost}}
        .dump();
}

namespace {

void add_record(const json& j, history& into) {
    const auto type = j.at("type").get<std::string>();
    if (type == "hold") {
        hold_record r;
        j.at("worker").get_to(r.worker);
        j.at("coroutine").get_to(r.coroutine);
        j.at("resource").get_to(r.resource);
        j.at("kind").get_to(r.kind);
        j.at("token").get_to(r.token);
        j.at("fence").get_to(r.fence);
        j.at("invoked").get_to(r.invoked);
        j.at("acquired").get_to(r.acquired);
        j.at("ended").get_to(r.ended);
        j.at("valid_until").get_to(r.valid_until);
        j.at("outcome").get_to(r.outcome);
        into.holds.push_back(std::move(r));
    } else if (type == "failure") {
        failure_record r;
        j.at("worker").get_to(r.worker);
        j.at("resource").get_to(r.resource);
        j.at("kind").get_to(r.kind);
        j.at("invoked").get_to(r.invoked);
        j.at("completed").get_to(r.completed);
        j.at("error").get_to(r.error);
        into.failures.push_back(std::move(r));
    } else if (type == "write") {
        write_record r;
        j.at("worker").get_to(r.worker);
        j.at("resource").get_to(r.resource);
        j.at("token").get_to(r.token);
        j.at("fence").get_to(r.fence);
        j.at("invoked").get_to(r.invoked);
        j.at("completed").get_to(r.completed);
        j.at("valid_until").get_to(r.valid_until);
        j.at("accepted").get_to(r.accepted);
        into.writes.push_back(std::move(r));
    } else if (type == "reentry") {
        reentry_record r;
        j.at("worker").get_to(r.worker);
        j.at("resource").get_to(r.resource);
        j.at("token").get_to(r.token);
        j.at("outer_fence").get_to(r.outer_fence);
        j.at("inner_fence").get_to(r.inner_fence);
        j.at("error").get_to(r.error);
        into.reentries.push_back(std::move(r));
    } else if (type == "summary") {
        worker_summary r;
        j.at("worker").get_to(r.worker);
        j.at("scopes_started").get_to(r.scopes_started);
        j.at("scopes_ended").get_to(r.scopes_ended);
        j.at("watchdogs_running").get_to(r.watchdogs_running);
        j.at("watchdog_renewals").get_to(r.watchdog_renewals);
        j.at("leases_lost").get_to(r.leases_lost);
        into.summaries.push_back(r);
    } else {
        throw std::invalid_argument("unknown record type " + type);
    }
}

}  // namespace

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
