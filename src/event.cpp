// SPDX-License-Identifier: BSL-1.0
#include <redlock/error.hpp>
#include <redlock/event.hpp>

namespace redlock {

const char* event_kind_name(event_kind kind) noexcept {
    switch (kind) {
        case event_kind::acquired:
            return "acquired";
        case event_kind::released:
            return "released";
        case event_kind::lease_lost:
            return "lease_lost";
        case event_kind::extend_failed:
            return "extend_failed";
        case event_kind::watchdog_stopped:
            return "watchdog_stopped";
        case event_kind::node_down:
            return "node_down";
        case event_kind::node_up:
            return "node_up";
        case event_kind::node_quarantined:
            return "node_quarantined";
        case event_kind::node_voting:
            return "node_voting";
        case event_kind::cluster_redirect:
            return "cluster_redirect";
    }
    return "unknown";
}

std::string to_string(const event& e) {
    const bool about_node = e.kind == event_kind::node_down || e.kind == event_kind::node_up ||
                            e.kind == event_kind::node_quarantined || e.kind == event_kind::node_voting ||
                            e.kind == event_kind::cluster_redirect;
    std::string s = event_kind_name(e.kind);
    s += ' ';
    s += about_node ? e.node_name : e.resource;
    if (e.error) {
        s += ": ";
        s += e.error.category() == error_category() ? error_name(static_cast<error>(e.error.value()))
                                                    : e.error.message();
    }
    if (e.duration.count() > 0 || e.kind == event_kind::acquired || e.kind == event_kind::released) {
        s += e.kind == event_kind::acquired ? " after " : e.kind == event_kind::released ? " held " : " for ";
        s += std::to_string(e.duration.count());
        s += " ms";
    }
    if (!e.detail.empty()) {
        s += " (";
        s += e.detail;
        s += ')';
    }
    return s;
}

}  // namespace redlock
