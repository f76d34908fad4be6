// SPDX-License-Identifier: BSL-1.0
#include "lock/client/client_state.hpp"

#include "lock/client/token.hpp"
#include "lock/nodes/answering_server.hpp"
#include "scripts/scripts_gen.hpp"
#include <redlock/error.hpp>
#include <redlock/redis/server_version.hpp>

#include <boost/asio/bind_executor.hpp>

#include <algorithm>
#include <random>

#include <unistd.h>

namespace redlock::detail {

namespace {

// Node names for messages and metrics: the URIs without their passwords.
std::vector<std::string> names_of(const client_config& cfg) {
    std::vector<std::string> names;
    for (const auto& spec : cfg.node_specs())
        names.push_back(spec.to_string());
    return names;
}

std::uint64_t seed_from_os() {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

event node_event(event_kind kind, std::size_t node, const std::string& name, boost::system::error_code ec,
                 std::string detail) {
    event e;
    e.kind = kind;
    e.node = node;
    e.node_name = name;
    e.error = ec;
    e.detail = std::move(detail);
    return e;
}

// Tells of entry `entry`'s quarantine (a server of node `node`) if it is in a new one. A cluster
// node's entries are its masters: `master` names the one.
void tell_quarantine(node_health_board& health, const event_sink& events, std::size_t entry, std::size_t node,
                     const std::string& name, const std::string& master = {}) {
    if (!events.wanted()) return;
    const auto now = std::chrono::steady_clock::now();
    const auto left = health.untold_quarantine(entry, now);
    if (left <= std::chrono::milliseconds::zero()) return;
    auto e =
        node_event(event_kind::node_quarantined, node, name, {},
                   (master.empty() ? "" : "master " + master + ": ") + health.describe(entry, now).problem);
    e.duration = left;
    events.emit(std::move(e));
}

// Reads the replication ID of a server this client saw become a master, on a connection whose
// failover mark found it a replica (node_health_board::on_replication_id_read).
void read_replication_id(const std::shared_ptr<node_health_board>& health, std::size_t entry,
                         redis::connection& connected, std::chrono::milliseconds timeout) {
    resp::request info;
    info.push("INFO", "replication");
    connected.async_exec(info, timeout,
                         [health, entry](boost::system::error_code ec, std::vector<resp::value> replies) {
                             if (!ec && replies.size() == 1)
                                 health->on_replication_id_read(entry, replication_id_of(replies.front()));
                         });
}

}  // namespace

client_state::client_state(boost::asio::any_io_executor ex, client_config cfg,
                           std::shared_ptr<lock_nodes> given)
    : ex_(ex),
      strand_(redis::detail::make_serial(ex)),
      cfg_(std::move(cfg)),
      // The connections share the client's strand: lock operations and their replies then run
      // without a hop between strands.
      // Always: what server each node is (one server must not vote twice) is read whatever
      // the quarantine settings.
      health_(std::make_shared<node_health_board>(cfg_.nodes.size(), cfg_.max_ttl, cfg_.drift_factor,
                                                  cfg_.restart_quarantine)),
      events_(std::make_shared<event_sink>(ex_, cfg_.on_event)),
      members_(std::make_shared<cluster_members>()),
      node_names_(names_of(cfg_)),
      metrics_(node_names_),
      rng_(seed_from_os()),
      extends_(*this, cfg_.nodes.size()),
      replicas_(*this, cfg_.nodes.size()),
      listener_(*this) {
    if (cfg_.identify_holder) {
        char host[256] = {};
        if (::gethostname(host, sizeof host - 1) == 0) host_name_ = host;
    }
    // The client validated the config: a URI that does not parse here is a library bug.
    const auto specs = cfg_.node_specs();
    members_->entries.resize(specs.size());
    // What the connections' configurations need, shared: a cluster link may make one after the
    // client state is gone, while its last handlers run.
    auto shared_cfg = std::make_shared<const client_config>(cfg_);
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const bool cluster = specs[i].kind == redis::node_spec::topology::cluster;
        const bool sentinel = specs[i].kind == redis::node_spec::topology::sentinel;
        // A failover's promoted replica may lack grants its master made: quarantined as a
        // restarted server is. This client saw the switch; failover_mark.lua tells the others.
        redis::detail::cluster_link::new_master_fn on_new_master;
        const auto& name = node_names_[i];
        if (cfg_.failover_quarantine && cluster) {
            on_new_master = [health = health_, events = events_, members = members_, i, name,
                             timeout = background_timeout()](const redis::node_address& a,
                                                             redis::connection* connected) {
                const auto entry = member_entry_made(*health, *members, i, a);
                health->on_promoted(entry);
                tell_quarantine(*health, *events, entry, i, name, redis::detail::endpoint(a));
                // A connection set up while it was a replica (a seed) read no replication ID;
                // without one, its first grant would seem to come after yet another promotion.
                if (connected && health->marked_as_replica(entry))
                    read_replication_id(health, entry, *connected, timeout);
            };
        } else if (cfg_.failover_quarantine && sentinel) {
            // Sentinel moved the master: the node is one voter whatever server it reaches. The
            // locator connects to it anew, and that connection's failover mark reads its ID.
            on_new_master = [health = health_, events = events_, i, name](const redis::node_address&,
                                                                          redis::connection*) {
                health->on_promoted(i);
                tell_quarantine(*health, *events, i, i, name);
            };
        }
        redis::detail::cluster_link::redirect_fn on_redirect;
        if (cluster && events_->wanted()) {
            on_redirect = [events = events_, i, name](bool ask, std::uint16_t slot,
                                                      const redis::node_address& to) {
                events->emit(node_event(event_kind::cluster_redirect, i, name, {},
                                        std::string(ask ? "ASK" : "MOVED") + " slot " + std::to_string(slot) +
                                            " to " + redis::detail::endpoint(to)));
            };
        }
        nodes_.push_back(std::make_unique<redis::detail::node_link>(
            strand_, specs[i],
            [shared_cfg, health = health_, events = events_, members = members_, i, name,
             cluster](const redis::node_address& a) {
                return config_for(*shared_cfg, health, events, *members, i, name, cluster, a);
            },
            std::move(on_new_master), std::move(on_redirect)));
    }
    given_nodes_ = std::move(given);
    if (given_nodes_) return;
    // Connect now, so the first acquire does not pay for N handshakes; a node that is down keeps
    // being retried in the background.
    for (auto& n : nodes_)
        n->start();
}

std::shared_ptr<client_state> client_state::make(boost::asio::any_io_executor ex, client_config cfg) {
    return make_over(std::move(ex), std::move(cfg), {});
}

std::shared_ptr<client_state> client_state::make_over(boost::asio::any_io_executor ex, client_config cfg,
                                                      std::shared_ptr<lock_nodes> nodes) {
    auto state = std::make_shared<client_state>(ex, std::move(cfg), std::move(nodes));
    redis::call_on_shutdown(boost::asio::query(ex, boost::asio::execution::context), state);
    return state;
}

void client_state::on_context_shutdown() noexcept {
    extends_.drop_all();
    replicas_.drop_all();
    auto close_waiters = std::move(work_.close_waiters);
    work_.close_waiters.clear();
}

client_state::~client_state() {
    for (auto& n : nodes_)
        n->close();
}

std::chrono::milliseconds client_state::node_timeout_for(std::chrono::milliseconds ttl,
                                                         std::chrono::milliseconds requested) const noexcept {
    if (requested > requested.zero()) return requested;
    return std::max(std::chrono::milliseconds(1), std::min(cfg_.node_timeout, ttl / 10));
}

redis::connection_config client_state::config_for(const client_config& cfg,
                                                  const std::shared_ptr<node_health_board>& health,
                                                  const std::shared_ptr<event_sink>& events,
                                                  cluster_members& members, std::size_t node,
                                                  const std::string& name, bool cluster,
                                                  const redis::node_address& address) {
    redis::connection_config cc;
    cc.address = address;
    cc.client_name = cfg.client_name;
    cc.connect_timeout = cfg.connect_timeout;
    cc.health_check_interval = cfg.health_check_interval;
    cc.tls = node < cfg.per_node.size() && cfg.per_node[node].tls ? *cfg.per_node[node].tls : cfg.tls;
    cc.max_queued_requests = cfg.max_queued_requests;
    cc.scripts.assign(scripts::all.begin(), scripts::all.end());
    cc.min_server_version = redis::lock_min_server_version;
    if (events->wanted()) {
        // A cluster node's masters each tell of themselves: the event names the server.
        const auto server = redis::detail::endpoint(address);
        cc.on_connect = [events, node, name, server] {
            events->emit(node_event(event_kind::node_up, node, name, {}, server));
        };
        cc.on_disconnect = [events, node, name](boost::system::error_code ec, std::string_view why) {
            events->emit(node_event(event_kind::node_down, node, name, ec, std::string(why)));
        };
    }
    const auto entry = cluster ? member_entry_made(*health, members, node, address) : node;
    cc.on_server_info = [health, events, entry, node, name,
                         master = cluster ? redis::detail::endpoint(address)
                                          : std::string()](std::string_view text) {
        health->on_server_info(entry, text);
        tell_quarantine(*health, *events, entry, node, name, master);
    };
    // The largest max_ttl any client of these nodes records (record_max_ttl.lua), for the
    // restart quarantine. In a cluster only the master of the key's slot records it; the others'
    // refusals are ignored.
    const bool record = cfg.restart_quarantine;
    if (record) {
        cc.setup_commands.push_back({"EVAL", std::string(scripts::record_max_ttl.source), "1",
                                     "{" + cfg.key_prefix + "}:max_ttl",
                                     std::to_string(cfg.max_ttl.count())});
    }
    // The failover quarantine as the server itself keeps it (it records the longest max_ttl +
    // drift of its own, on every master).
    const bool mark = cfg.failover_quarantine;
    if (mark) {
        cc.setup_commands.push_back({"EVAL", std::string(scripts::failover_mark.source), "0", cfg.key_prefix,
                                     std::to_string(health->failover_wait().count())});
    }
    if (record || mark) {
        cc.on_setup_replies = [health, entry, record, mark](const std::vector<resp::value>& replies) {
            if (record && !replies.empty() && replies.front().kind == resp::type::integer)
                health->on_recorded_max_ttl(std::chrono::milliseconds(replies.front().integer));
            if (mark && replies.size() == (record ? 2u : 1u)) health->on_failover_mark(entry, replies.back());
        };
    }
    return cc;
}

std::size_t client_state::member_entry_made(node_health_board& health, cluster_members& members,
                                            std::size_t node, const redis::node_address& address) {
    std::lock_guard lock(members.mutex);
    auto& mine = members.entries[node];
    const auto name = redis::detail::endpoint(address);
    const auto known = std::find_if(mine.begin(), mine.end(), [&](const auto& m) { return m.first == name; });
    if (known != mine.end()) return known->second;
    mine.emplace_back(name, health.add_node(node));
    return mine.back().second;
}

std::optional<std::size_t> client_state::member_entry(std::size_t node,
                                                      const redis::node_address& address) const {
    std::lock_guard lock(members_->mutex);
    const auto name = redis::detail::endpoint(address);
    for (const auto& [member, entry] : members_->entries[node])
        if (member == name) return entry;
    return std::nullopt;
}

bool client_state::votes(std::size_t node, std::string_view key) const {
    // A node's health entry is its own; a cluster node's, that of the master of the key's slot.
    auto entry = node;
    const redis::node_address* master = nullptr;
    if (const auto* cluster = nodes_[node]->cluster()) {
        master = cluster->master_address(redis::detail::key_slot(key));
        // No master known: the call failed anyway. A master never connected to cannot have granted.
        if (!master) return true;
        const auto member = member_entry(node, *master);
        if (!member) return false;
        entry = *member;
    }
    const auto now = clock::now();
    const bool voting = health_->votes(entry, now);
    if (voting && events_->wanted() && health_->told_quarantine_over(entry, now))
        events_->emit(node_event(event_kind::node_voting, node, node_names_[node], {},
                                 master ? "master " + redis::detail::endpoint(*master) : std::string()));
    return voting;
}

std::string client_state::why_answer_does_not_count(std::size_t node, std::size_t replication_id_reply,
                                                    std::span<const resp::value> replies,
                                                    boost::system::error_code& ec) const {
    ec = error::node_quarantined;
    const auto* server = nodes_[node]->answering();
    auto entry = std::optional<std::size_t>(node);
    std::string name;
    if (server) {
        name = redis::detail::endpoint(*server);
        entry = member_entry(node, *server);
        auto why = detail::why_answer_does_not_count(*health_, entry, name, clock::now());
        if (!why.empty()) return why;
    }
    if (replication_id_reply == 0) return {};
    bool malformed = false;
    auto why = why_replication_id_does_not_count(
        *health_, *entry, replication_id_reply < replies.size() ? &replies[replication_id_reply] : nullptr,
        name, malformed);
    if (malformed) ec = error::unexpected_reply;
    return why;
}

void client_state::judge_answer(std::size_t node, acquire_answer& answer, std::size_t replication_id_reply,
                                std::span<const resp::value> replies) const {
    if (answer.verdict != vote::granted) return;
    boost::system::error_code ec;
    auto why = why_answer_does_not_count(node, replication_id_reply, replies, ec);
    if (why.empty()) return;
    answer.verdict = vote::failed;
    answer.ec = ec;
    answer.detail = std::move(why);
    answer.node_fault = ec == error::unexpected_reply;
}

std::string client_state::same_server_nodes() const {
    // Every acquire asks: one atomic load, and the board's lock only when there is an answer.
    if (!health_->any_same_server()) return {};
    for (std::size_t i = 0; i < node_count(); ++i) {
        const auto other = health_->same_server_as(i);
        if (!other) continue;
        return "nodes " + std::to_string(i) + " (" + node_name(i) + ") and " + std::to_string(*other) + " (" +
               node_name(*other) +
               ") are one server (the same run_id): list each server once, or it votes twice";
    }
    return {};
}

std::optional<node_health_board::view> client_state::vote_view(std::size_t node, std::string_view key,
                                                               std::string& whose) const {
    const auto* cluster = nodes_[node]->cluster();
    if (!cluster) return health_->describe(node, clock::now());
    const auto slot = redis::detail::key_slot(key);
    const auto* master = cluster->master_address(slot);
    if (!master) return std::nullopt;
    whose = "the master of slot " + std::to_string(slot) + ", " + redis::detail::endpoint(*master) + ": ";
    const auto entry = member_entry(node, *master);
    if (entry) return health_->describe(*entry, clock::now());
    node_health_board::view never_connected;
    never_connected.problem = "not connected";
    return never_connected;
}

std::string client_state::why_not_voting(std::size_t node, std::string_view key) const {
    std::string whose;
    const auto view = vote_view(node, key, whose);
    return !view || view->problem.empty() ? std::string() : whose + view->problem;
}

std::chrono::milliseconds client_state::quarantine_left(std::size_t node, std::string_view key) const {
    std::string whose;
    const auto view = vote_view(node, key, whose);
    return view ? view->quarantine_left : std::chrono::milliseconds::zero();
}

node_health_board::view client_state::health_of(std::size_t node) const {
    node_health_board::view all;
    if (!nodes_[node]->routes_by_slot()) return health_->describe(node, clock::now());
    std::lock_guard lock(members_->mutex);
    all.voting = !members_->entries[node].empty();
    for (const auto& [member, entry] : members_->entries[node]) {
        auto v = health_->describe(entry, clock::now());
        all.quarantine_left = std::max(all.quarantine_left, v.quarantine_left);
        if (!v.voting) all.voting = false;
        if (all.problem.empty() && !v.problem.empty()) all.problem = member + ": " + v.problem;
    }
    return all;
}

std::chrono::milliseconds client_state::background_timeout() const noexcept {
    return std::max(cfg_.node_timeout, cfg_.connect_timeout);
}

void client_state::admit(std::size_t node, std::string_view key, vote& v, boost::system::error_code& ec,
                         std::string& detail) {
    if (v == vote::granted && !votes(node, key)) {
        v = vote::failed;
        ec = error::node_quarantined;
        detail = why_not_voting(node, key);
    }
    if (v == vote::failed && ec == error::request_timeout && detail.empty()) {
        auto& link = *nodes_[node];
        if (!link.is_connected()) {
            const auto last = link.last_error();
            if (last.code) detail = "not connected: " + last.message;
            // What the server refused for good is the failure, not the wait for it.
            if (last.permanent) ec = last.code;
        }
    }
}

void client_state::call(std::size_t node, const node_call& c, std::chrono::milliseconds timeout,
                        std::shared_ptr<node_answers> to, call_tag tag) {
    call_on(
        node, c, timeout,
        [to = std::move(to), tag, node](boost::system::error_code ec, std::span<const resp::value> replies) {
            if (to) to->on_node_answer(tag, node, ec, replies);
        });
}

void client_state::extend(std::size_t node, const lock_kind& kind, const std::string& token,
                          std::chrono::milliseconds ttl, std::chrono::milliseconds timeout,
                          std::shared_ptr<node_answers> to, call_tag tag) {
    if (!kind.extends_in_batches()) {
        node_call single;
        kind.extend(token, ttl, single);
        call(node, single, timeout, std::move(to), tag);
        return;
    }
    extends_.add(node, kind.keys().lock, token, std::to_string(ttl.count()), timeout,
                 [to = std::move(to), tag, node](boost::system::error_code ec, resp::value v) {
                     if (to) to->on_node_answer(tag, node, ec, std::span<const resp::value>(&v, 1));
                 });
}

void client_state::confirm_replicas(std::size_t node, std::string_view key, int replicas,
                                    std::chrono::milliseconds replica_timeout,
                                    std::chrono::milliseconds timeout, std::string_view what,
                                    std::shared_ptr<node_answers> to, call_tag tag) {
    replicas_.confirm(node, key, replicas, replica_timeout, timeout, what,
                      [to = std::move(to), tag, node](replication_verdict v) {
                          if (to) to->on_replicas(tag, node, std::move(v));
                      });
}

void client_state::script_refused(std::string_view script_name, resp::value& v,
                                  boost::system::error_code& ec) {
    ec = error::server_error;
    // Redis names a script by its SHA-1 and line ("@user_script:14"), not by the command it
    // refused: say which of our scripts it is.
    if (v.str.find("@user_script") != std::string::npos) v.str += " [" + std::string(script_name) + ".lua]";
}

void client_state::eval_on(std::size_t node, const redis::script& s, std::span<const std::string_view> keys,
                           std::span<const std::string_view> args, std::chrono::milliseconds timeout,
                           std::function<void(boost::system::error_code, resp::value)> on_reply,
                           redis::detail::cluster_link::on_tryagain tryagain) {
    nodes_[node]->eval(s, keys, args, timeout,
                       boost::asio::bind_executor(
                           strand_,
                           [self = shared_from_this(), node, name = s.name, tryagain,
                            on_reply = std::move(on_reply)](boost::system::error_code ec, resp::value v) {
                               if (!ec && v.is_error()) script_refused(name, v, ec);
                               // A TRYAGAIN handed back is the caller's to split, not the node failing.
                               const bool split =
                                   tryagain == redis::detail::cluster_link::on_tryagain::hand_back &&
                                   v.error_code() == "TRYAGAIN";
                               if (ec && !split) self->metrics_.node_failure(node, ec);
                               if (on_reply) on_reply(ec, std::move(v));
                           }),
                       tryagain);
}

std::string client_state::make_holder_token(std::string_view label) const {
    if (!cfg_.identify_holder) return make_token();
    // The process's id when the token is made: a child forked after the client was made is
    // not its parent.
    return make_token(holder_identity_text(host_name_, static_cast<long>(::getpid()), label));
}

}  // namespace redlock::detail
