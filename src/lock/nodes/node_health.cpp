// SPDX-License-Identifier: BSL-1.0
#include "lock/nodes/node_health.hpp"

#include "lock/acquire/quorum.hpp"
#include "lock/nodes/uptime_quarantine.hpp"

#include <algorithm>
#include <charconv>

namespace redlock::detail {

namespace {

// The value of "<name>:<value>" on its own line, or empty.
std::string_view field(std::string_view text, std::string_view name) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        auto line = text.substr(pos, end - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.size() > name.size() && line.substr(0, name.size()) == name && line[name.size()] == ':') {
            return line.substr(name.size() + 1);
        }
        pos = end + 1;
    }
    return {};
}

}  // namespace

bool parse_server_info(std::string_view text, server_info& out) {
    const auto run_id = field(text, "run_id");
    const auto uptime = field(text, "uptime_in_seconds");
    long long seconds = -1;
    const auto [end, ec] = std::from_chars(uptime.data(), uptime.data() + uptime.size(), seconds);
    if (run_id.empty() || ec != std::errc() || end != uptime.data() + uptime.size() || seconds < 0)
        return false;
    out.run_id = std::string(run_id);
    out.uptime = std::chrono::seconds(seconds);
    return true;
}

std::string_view parse_replication_id(std::string_view text) {
    const auto id = field(text, "master_replid");
    const bool hex = std::all_of(id.begin(), id.end(),
                                 [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
    return id.size() == 40 && hex ? id : std::string_view();
}

std::string_view replication_id_of(const resp::value& info) {
    return info.is_string() && !info.is_error() ? parse_replication_id(info.str) : std::string_view();
}

void node_health::on_server_info(const server_info& info, clock::time_point now,
                                 std::chrono::milliseconds max_ttl, double drift_factor, bool restart_rules) {
    const auto wait = max_ttl + drift_allowance(max_ttl, drift_factor);
    if (!run_id_.empty() && info.run_id != run_id_) run_id_changed_at_ = now;
    quarantined_until_ = std::max(quarantined_until_, marked_ends_);
    if (promoted_at_) {
        promotion_ends_ = *promoted_at_ + wait;
        quarantined_until_ = std::max(quarantined_until_, promotion_ends_);
    }
    run_id_ = info.run_id;
    known_ = true;
    if (!restart_rules) return;
    if (run_id_changed_at_) {
        quarantined_until_ = std::max(quarantined_until_, *run_id_changed_at_ + wait);
    }
    // Every node that started less than the whole wait ago (uptime is in whole seconds, so up to
    // a second more), not only one up for less than max_ttl: with drift above a second (max_ttl
    // above 100 s at a drift factor of 0.01) a node up for between max_ttl + 1 s and that voted
    // before the locks it lost had expired.
    const auto started = now - info.uptime;
    quarantined_until_ = std::max(quarantined_until_, started + uptime_quarantine(max_ttl, drift_factor));
}

void node_health::on_failover_mark(clock::time_point now, std::chrono::milliseconds left) {
    if (left <= left.zero()) return;
    marked_ends_ = std::max(marked_ends_, now + left);
    quarantined_until_ = std::max(quarantined_until_, marked_ends_);
}

void node_health::on_promoted(clock::time_point now, std::chrono::milliseconds max_ttl, double drift_factor) {
    promoted_at_ = now;
    promotion_ends_ = now + max_ttl + drift_allowance(max_ttl, drift_factor);
    quarantined_until_ = std::max(quarantined_until_, promotion_ends_);
}

node_health_board::node_health_board(std::size_t nodes, std::chrono::milliseconds max_ttl,
                                     double drift_factor, bool restart_rules)
    : nodes_(nodes),
      unparsable_(nodes, false),
      mark_failed_(nodes),
      replication_ids_(nodes),
      marked_as_replica_(nodes, false),
      same_server_(nodes),
      last_seen_(nodes),
      told_until_(nodes),
      max_ttl_(max_ttl),
      drift_factor_(drift_factor),
      restart_rules_(restart_rules) {
    for (std::size_t i = 0; i < nodes; ++i)
        owner_.push_back(i);
}

std::size_t node_health_board::add_node(std::size_t owner) {
    std::lock_guard lock(mutex_);
    nodes_.emplace_back();
    unparsable_.push_back(false);
    mark_failed_.emplace_back();
    replication_ids_.emplace_back();
    marked_as_replica_.push_back(false);
    same_server_.emplace_back();
    last_seen_.emplace_back();
    told_until_.emplace_back();
    owner_.push_back(owner);
    return nodes_.size() - 1;
}

void node_health_board::on_server_info(std::size_t node, std::string_view text) {
    server_info info;
    const bool parsed = parse_server_info(text, info);
    std::lock_guard lock(mutex_);
    unparsable_[node] = !parsed;
    if (parsed) {
        const auto now = clock::now();
        nodes_[node].on_server_info(info, now, std::max(max_ttl_, recorded_max_ttl_), drift_factor_,
                                    restart_rules_);
        last_seen_[node] = seen{info, now};
    }
    if (!parsed || !mark_failed_[node].empty()) nodes_[node].on_reconnect();
    bool any = false;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        same_server_[i].reset();
        for (std::size_t j = 0; j < nodes_.size() && !same_server_[i]; ++j) {
            if (owner_[j] != owner_[i] && !nodes_[i].run_id().empty() &&
                nodes_[i].run_id() == nodes_[j].run_id())
                same_server_[i] = owner_[j];
        }
        any = any || same_server_[i].has_value();
    }
    any_same_server_.store(any, std::memory_order_release);
}

void node_health_board::on_failover_mark(std::size_t node, const resp::value& reply) {
    const auto length = failover_wait();
    std::lock_guard lock(mutex_);
    auto& failed = mark_failed_[node];
    using resp::type;
    failed.clear();
    const auto* items = reply.kind == type::array ? &reply.elements : nullptr;
    if (reply.is_error()) {
        failed = reply.str;
    } else if (!items || items->size() != 3 || (*items)[0].kind != type::integer ||
               (*items)[1].kind != type::integer || (*items)[2].kind != type::bulk_string) {
        failed =
            "failover_mark.lua answered " + resp::to_string(reply) + ", not {left, length, replication ID}";
    }
    if (!failed.empty()) return;
    auto left = std::chrono::milliseconds((*items)[0].integer);
    marked_as_replica_[node] = left < left.zero();
    if (left < left.zero()) {
        // Still a replica: if it becomes a master on this connection, that is after now. Its ID
        // is its master's, and a promotion gives it a new one: its first grant quarantines it
        // again (granted_under), since that promotion may come later than the wait from now.
        nodes_[node].on_promoted(clock::now(), std::max(max_ttl_, recorded_max_ttl_), drift_factor_);
        return;
    }
    remember_replication_id(node, (*items)[2].str);
    // Started by a client that waits less than this one: the rest of this one's wait too.
    const auto started_with = std::chrono::milliseconds((*items)[1].integer);
    if (left > left.zero()) left += std::max(length - started_with, std::chrono::milliseconds::zero());
    nodes_[node].on_failover_mark(clock::now(), left);
}

bool node_health_board::granted_under(std::size_t node, std::string_view replication_id) {
    std::lock_guard lock(mutex_);
    const auto& known = replication_ids_[node];
    if (std::find(known.begin(), known.end(), replication_id) != known.end()) return true;
    nodes_[node].on_promoted(clock::now(), std::max(max_ttl_, recorded_max_ttl_), drift_factor_);
    remember_replication_id(node, replication_id);
    return false;
}

void node_health_board::on_replication_id_read(std::size_t node, std::string_view replication_id) {
    if (replication_id.empty()) return;
    std::lock_guard lock(mutex_);
    nodes_[node].on_promoted(clock::now(), std::max(max_ttl_, recorded_max_ttl_), drift_factor_);
    remember_replication_id(node, replication_id);
    marked_as_replica_[node] = false;
}

bool node_health_board::marked_as_replica(std::size_t node) const {
    std::lock_guard lock(mutex_);
    return marked_as_replica_[node];
}

void node_health_board::remember_replication_id(std::size_t node, std::string_view id) {
    constexpr std::size_t kept = 4;
    auto& known = replication_ids_[node];
    if (std::find(known.begin(), known.end(), id) != known.end()) return;
    if (known.size() == kept) known.erase(known.begin());
    known.emplace_back(id);
}

std::chrono::milliseconds node_health_board::failover_wait() const {
    const auto ttl = quarantine_ttl();
    return ttl + std::chrono::ceil<std::chrono::milliseconds>(drift_allowance(ttl, drift_factor_));
}

void node_health_board::on_promoted(std::size_t node) {
    std::lock_guard lock(mutex_);
    nodes_[node].on_promoted(clock::now(), std::max(max_ttl_, recorded_max_ttl_), drift_factor_);
}

void node_health_board::on_recorded_max_ttl(std::chrono::milliseconds recorded) {
    std::lock_guard lock(mutex_);
    if (recorded <= recorded_max_ttl_) return;
    recorded_max_ttl_ = recorded;
    if (recorded <= max_ttl_) return;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (last_seen_[i] && nodes_[i].known())
            nodes_[i].on_server_info(last_seen_[i]->info, last_seen_[i]->at, recorded, drift_factor_,
                                     restart_rules_);
    }
}

std::chrono::milliseconds node_health_board::quarantine_ttl() const {
    std::lock_guard lock(mutex_);
    return std::max(max_ttl_, recorded_max_ttl_);
}

std::optional<std::size_t> node_health_board::same_server_as(std::size_t node) const {
    std::lock_guard lock(mutex_);
    return same_server_[node];
}

bool node_health_board::votes(std::size_t node, clock::time_point now) const {
    std::lock_guard lock(mutex_);
    return !same_server_[node] && nodes_[node].votes(now);
}

std::chrono::milliseconds node_health_board::untold_quarantine(std::size_t node, clock::time_point now) {
    std::lock_guard lock(mutex_);
    const auto& h = nodes_[node];
    if (!h.known() || h.votes(now) || h.quarantined_until() <= told_until_[node])
        return std::chrono::milliseconds::zero();
    told_until_[node] = h.quarantined_until();
    return std::chrono::ceil<std::chrono::milliseconds>(h.quarantined_until() - now);
}

bool node_health_board::told_quarantine_over(std::size_t node, clock::time_point now) {
    std::lock_guard lock(mutex_);
    if (told_until_[node] == clock::time_point{} || !nodes_[node].votes(now)) return false;
    told_until_[node] = clock::time_point{};
    return true;
}

node_health_board::view node_health_board::describe(std::size_t node, clock::time_point now) const {
    std::lock_guard lock(mutex_);
    const auto& h = nodes_[node];
    view v;
    v.voting = !same_server_[node] && h.votes(now);
    v.run_id = h.run_id();
    if (same_server_[node]) {
        v.problem = "the same server (run_id " + h.run_id() + ") as node " +
                    std::to_string(*same_server_[node]) + ": it does not vote twice";
    } else if (!mark_failed_[node].empty()) {
        v.problem = "its failover mark failed (no vote without it): " + mark_failed_[node];
    } else if (unparsable_[node]) {
        v.problem = "its INFO server reply has no run_id or uptime_in_seconds";
    } else if (!h.known()) {
        v.problem = "not connected since its last (re)connect";
    } else if (!v.voting) {
        v.quarantine_left = std::chrono::ceil<std::chrono::milliseconds>(h.quarantined_until() - now);
        v.problem = (h.quarantined_by_promotion()
                         ? "failover quarantine: it became a master less than max_ttl ago; it votes in "
                         : "restart quarantine: it (re)started less than max_ttl ago; it votes in ") +
                    std::to_string(std::chrono::ceil<std::chrono::seconds>(v.quarantine_left).count()) + " s";
    }
    return v;
}

}  // namespace redlock::detail
