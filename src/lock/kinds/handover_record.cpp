// SPDX-License-Identifier: BSL-1.0
#include "lock/kinds/handover_record.hpp"

#include "lock/lease/lease_state.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace redlock::detail {

namespace {

const char* kind_name(const lock_kind& kind) {
    if (!kind.resources().empty()) return "several";
    if (kind.kept_between_rounds().queued) return "fair";
    if (kind.permits() > 0) return "semaphore";
    if (kind.mode() == lock_mode::read) return "read";
    if (kind.mode() == lock_mode::write) return "write";
    if (!kind.owner().empty()) return "reentrant";
    return "lock";
}

}  // namespace

std::string handover_text(const lease_state& state) {
    const auto& kind = *state.kind;
    nlohmann::json j = {{"redlock_lease", 1},
                        {"resource", state.resource},
                        {"kind", kind_name(kind)},
                        {"token", state.token},
                        {"fence", state.fence},
                        {"fenced", !kind.fence_key().empty()},
                        {"owner", std::string(kind.owner())},
                        {"place", std::string(kind.kept_between_rounds().place)},
                        {"permits", kind.permits()}};
    if (!kind.resources().empty()) {
        j["resources"] = std::vector<std::string>(kind.resources().begin(), kind.resources().end());
        j["fences"] = state.fences;
    }
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void take_kind_of(const handover_record& record, lock_options& options) {
    options.reentrant = record.kind.reentrant;
    if (!record.kind.reentrant)
        options.owner = record.kind.owner;
    else if (options.owner.empty())
        options.owner = owner_id::random();
    options.fair = record.kind.fair;
    options.permits = record.kind.permits;
    options.mode = record.kind.mode;
    options.fenced = record.kind.fenced;
    options.wait = std::chrono::milliseconds::zero();
}

bool parse_handover(std::string_view text, handover_record& out, std::string& why) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    const auto text_field = [&](const char* name, std::string& to) {
        if (!j.contains(name) || !j[name].is_string()) return false;
        to = j[name].get<std::string>();
        return true;
    };
    std::string kind;
    std::string owner;
    if (j.is_discarded() || !j.is_object() || j.value("redlock_lease", 0) != 1 ||
        !text_field("resource", out.resource) || !text_field("kind", kind) ||
        !text_field("token", out.token) || !text_field("owner", owner) || !text_field("place", out.place) ||
        !j.contains("fence") || !j["fence"].is_number_unsigned() || !j.contains("fenced") ||
        !j["fenced"].is_boolean() || !j.contains("permits") || !j["permits"].is_number_integer() ||
        out.token.empty()) {
        why =
            "not a lease written by lease::handover() (a JSON object with redlock_lease 1, resource, kind, "
            "token, fence, fenced, owner, place, permits)";
        return false;
    }
    out.fence = j["fence"].get<std::uint64_t>();
    out.kind = lock_options{};
    out.kind.fenced = j["fenced"].get<bool>();
    if (kind == "reentrant") {
        out.kind.reentrant = true;
        out.kind.owner = owner_id(owner);
    } else if (kind == "read" || kind == "write") {
        // A read-write lock's holds are reentrant by owner when they have one.
        out.kind.mode = kind == "read" ? lock_mode::read : lock_mode::write;
        out.kind.reentrant = !owner.empty();
        out.kind.owner = owner_id(owner);
    } else if (kind == "fair") {
        if (out.place.empty()) {
            why = "a lease of kind \"fair\" names its place in the queue";
            return false;
        }
        out.kind.fair = true;
    } else if (kind == "semaphore") {
        out.kind.permits = j["permits"].get<int>();
    } else if (kind == "several") {
        const auto& list = j.contains("resources") ? j["resources"] : nlohmann::json();
        const bool names = list.is_array() && list.size() >= 2 &&
                           std::all_of(list.begin(), list.end(), [](const auto& e) { return e.is_string(); });
        if (!names) {
            why = "a lease of kind \"several\" needs \"resources\": a list of at least two names";
            return false;
        }
        for (const auto& e : list)
            out.resources.push_back(e.get<std::string>());
        // The fences follow the resources' order, which the writer sorted: keep it.
        if (!std::is_sorted(out.resources.begin(), out.resources.end()) ||
            std::adjacent_find(out.resources.begin(), out.resources.end()) != out.resources.end()) {
            why = "a lease of kind \"several\" names its resources sorted, each once";
            return false;
        }
        const auto& fences = j.contains("fences") ? j["fences"] : nlohmann::json();
        const bool numbers =
            fences.is_array() &&
            std::all_of(fences.begin(), fences.end(), [](const auto& e) { return e.is_number_unsigned(); });
        if (!numbers || (out.kind.fenced && fences.size() != out.resources.size())) {
            why = "a lease of kind \"several\" needs \"fences\": one number per resource when fenced";
            return false;
        }
        for (const auto& e : fences)
            out.fences.push_back(e.get<std::uint64_t>());
    } else if (kind != "lock") {
        why = "unknown kind of lock \"" + kind + "\"";
        return false;
    }
    return true;
}

}  // namespace redlock::detail
