// SPDX-License-Identifier: BSL-1.0
#include "redis/cluster_link.hpp"

#include "redis/cluster_shards.hpp"
#include "redis/script_call.hpp"
#include <redlock/error.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/query.hpp>

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

namespace redlock::redis::detail {

namespace {

using clock = std::chrono::steady_clock;

// A pause before a TRYAGAIN is sent again: the keys of a migrating slot move in batches.
constexpr std::chrono::milliseconds tryagain_pause{10};
// Without a timeout, how often a TRYAGAIN is retried before its reply is handed back.
constexpr int max_tryagain_without_timeout = 100;
// How soon a map that could not be read is asked for again.
constexpr std::chrono::milliseconds unknown_map_retry{250};
// The shortest time between two reads of the map.
constexpr std::chrono::milliseconds min_refresh_gap{100};
// How long a closed connection to a node gone from the map is kept: the handlers of the requests
// its close() ended have all run by then.
constexpr std::chrono::seconds gone_kept{60};

// A server older than 7.0 does not know CLUSTER SHARDS; an ACL may allow CLUSTER SLOTS only.
bool lacks_cluster_shards(const resp::value& reply) {
    if (!reply.is_error()) return false;
    if (reply.error_code() == "NOPERM") return true;
    std::string text = reply.str;
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text.find("unknown subcommand") != std::string::npos;
}

resp::value error_value(std::string text) {
    resp::value v;
    v.kind = resp::type::error;
    v.str = std::move(text);
    return v;
}

}  // namespace

struct cluster_link::request {
    // Boost 1.81's any_completion_handler move-assignment recurses without end (it copies the
    // source through its own converting constructor): handlers are only ever move-constructed.
    explicit request(exec_handler h) : on_exec(std::move(h)) {}
    explicit request(eval_handler h) : on_eval(std::move(h)) {}

    std::uint16_t slot = 0;
    std::optional<script> lua;  // set: an EVALSHA in `payload`; else `commands` commands
    std::string payload;
    std::size_t commands = 1;
    std::string trailer;  // a script's: commands sent right behind it (eval_then)
    std::size_t trailer_commands = 0;
    bool as_eval = false;  // a script's EVALSHA met NOSCRIPT: it goes as EVAL from now on
    std::optional<clock::time_point> deadline;
    int redirects = 0;
    int tryagains = 0;
    bool hand_back_tryagain = false;
    bool done = false;
    bool parked = false;
    bool waited_for_map = false;  // parked once because its master was not connected
    exec_handler on_exec;
    eval_handler on_eval;
    std::unique_ptr<boost::asio::steady_timer> timer;  // parked, or pausing after TRYAGAIN
};

cluster_link::cluster_link(strand_type strand, std::vector<node_address> seeds, config_for make_config,
                           new_master_fn on_new_master, redirect_fn on_redirect, address_map remap)
    : strand_(std::move(strand)),
      seeds_(std::move(seeds)),
      remap_(std::move(remap)),
      make_config_(std::move(make_config)),
      on_new_master_(std::move(on_new_master)),
      on_redirect_(std::move(on_redirect)),
      refresh_timer_(strand_) {}

cluster_link::~cluster_link() {
    for (auto& [name, c] : connections_)
        c->close();
}

void cluster_link::start() {
    call_on_shutdown(boost::asio::query(strand_, boost::asio::execution::context), weak_from_this());
    for (const auto& seed : seeds_)
        connection_to(seed);
    refresh();
}

void cluster_link::on_context_shutdown() noexcept {
    parked_.clear();
}

void cluster_link::close() {
    if (closed_) return;
    closed_ = true;
    refresh_timer_.cancel();
    for (auto& [name, c] : connections_)
        c->close();
    for (auto& r : std::exchange(parked_, {}))
        finish(r, error::connection_closed, {});
}

void cluster_link::exec(std::uint16_t slot, std::string payload, std::size_t commands,
                        std::chrono::milliseconds timeout, exec_handler handler) {
    auto r = std::make_shared<request>(std::move(handler));
    r->slot = slot;
    r->payload = std::move(payload);
    r->commands = commands;
    if (timeout > timeout.zero()) r->deadline = clock::now() + timeout;
    route(r);
}

void cluster_link::drain(std::chrono::milliseconds timeout, drained_fn on_drained) {
    if (connections_.empty()) {
        boost::asio::post(strand_, std::move(on_drained));
        return;
    }
    struct barrier {
        drained_fn on_drained;
        std::size_t left;
    };
    auto b = std::make_shared<barrier>(barrier{std::move(on_drained), connections_.size()});
    resp::request ping;
    ping.push("PING");
    for (auto& [name, c] : connections_) {
        c->async_exec(ping, timeout,
                      boost::asio::bind_executor(strand_, [b](error_code, std::vector<resp::value>) {
                          if (--b->left == 0) b->on_drained();
                      }));
    }
}

void cluster_link::eval(std::uint16_t slot, const script& s, std::string evalsha,
                        std::chrono::milliseconds timeout, eval_handler handler, on_tryagain tryagain) {
    auto r = std::make_shared<request>(std::move(handler));
    r->slot = slot;
    r->hand_back_tryagain = tryagain == on_tryagain::hand_back;
    r->lua = s;
    r->payload = std::move(evalsha);
    if (timeout > timeout.zero()) r->deadline = clock::now() + timeout;
    route(r);
}

void cluster_link::eval_then(std::uint16_t slot, const script& s, std::string evalsha, std::string trailer,
                             std::size_t trailer_commands, std::chrono::milliseconds timeout,
                             exec_handler handler) {
    auto r = std::make_shared<request>(std::move(handler));
    r->slot = slot;
    r->lua = s;
    r->payload = std::move(evalsha);
    r->trailer = std::move(trailer);
    r->trailer_commands = trailer_commands;
    r->commands = 1 + trailer_commands;
    if (timeout > timeout.zero()) r->deadline = clock::now() + timeout;
    route(r);
}

std::chrono::milliseconds cluster_link::time_left(const request& r) const {
    if (!r.deadline) return std::chrono::milliseconds::zero();
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(*r.deadline - clock::now());
    return std::max(left, std::chrono::milliseconds(1));
}

void cluster_link::route(const std::shared_ptr<request>& r) {
    if (closed_) return finish(r, error::connection_closed, {});
    if (r->deadline && clock::now() >= *r->deadline) return finish(r, error::request_timeout, {});
    if (!map_known_) return park(r);
    const auto master = map_.master_of(r->slot);
    if (!master) {
        refresh();
        // What the cluster itself answers for a slot nobody serves: the caller reads it as the
        // node's reply, one per command.
        const auto text = "CLUSTERDOWN Hash slot " + std::to_string(r->slot) +
                          " is not served by any master in the cluster's slot map";
        return finish(
            r, {},
            std::vector<resp::value>(r->lua && r->trailer.empty() ? 1 : r->commands, error_value(text)));
    }
    auto& c = master_connection(*master);
    // A master that is not connected may be dead and failed over: the map is read again first,
    // once, rather than the request waiting out its timeout on a connection that never comes.
    // Not one that is still making its first connection (a master the map just named): that
    // one the request waits for, as a read of the map would take longer.
    if (!c.is_connected() && !r->waited_for_map && c.last_error().code) {
        r->waited_for_map = true;
        return park(r);
    }
    send(r, c, false);
}

void cluster_link::send_with_trailer(const std::shared_ptr<request>& r, connection& c, bool asking) {
    auto on_replies = boost::asio::bind_executor(
        strand_,
        [weak = weak_from_this(), r, from = &c, asking](error_code ec, std::vector<resp::value> replies) {
            const auto self = weak.lock();
            if (!self) return abandon(r);
            if (asking && !ec && !replies.empty()) replies.erase(replies.begin());  // ASKING's OK
            if (!ec && !replies.empty() && !r->as_eval && lacks_script(replies.front())) {
                // The trailer ran too, but for a write that did not happen: both go again.
                r->as_eval = true;
                return self->send_with_trailer(r, *from, asking);
            }
            self->on_replies(r, *from, ec, std::move(replies));
        });
    // ASKING holds for the next command only, the script: the trailer has no keys. After an
    // ASK the script goes as EVAL, since EVALSHA's NOSCRIPT would need an ASKING of its own.
    std::string payload;
    std::size_t commands = r->commands;
    if (asking) {
        resp::request asking_one;
        asking_one.push("ASKING");
        payload = asking_one.payload() + eval_payload(*r->lua, r->payload);
        ++commands;
    } else {
        payload = r->as_eval ? eval_payload(*r->lua, r->payload) : r->payload;
    }
    payload += r->trailer;
    c.async_exec_encoded(std::move(payload), commands, time_left(*r), std::move(on_replies));
}

void cluster_link::send(const std::shared_ptr<request>& r, connection& c, bool asking) {
    if (r->lua && !r->trailer.empty()) return send_with_trailer(r, c, asking);
    auto on_replies = boost::asio::bind_executor(
        strand_,
        [weak = weak_from_this(), r, from = &c, asking](error_code ec, std::vector<resp::value> replies) {
            // Weak: the connections hold this handler, and the link holds the connections.
            const auto self = weak.lock();
            if (!self) return abandon(r);
            if (asking && !ec) {
                // Drop ASKING's OKs: each command's reply follows its ASKING.
                std::vector<resp::value> own;
                for (std::size_t i = 1; i < replies.size(); i += 2)
                    own.push_back(std::move(replies[i]));
                replies = std::move(own);
            }
            self->on_replies(r, *from, ec, std::move(replies));
        });
    if (r->lua && !asking) {
        c.async_eval_encoded(*r->lua, r->payload, time_left(*r),
                             [on_replies = std::move(on_replies)](error_code ec, resp::value v) mutable {
                                 std::vector<resp::value> replies;
                                 replies.push_back(std::move(v));
                                 on_replies(ec, std::move(replies));
                             });
        return;
    }
    if (!asking) {
        c.async_exec_encoded(r->payload, r->commands, time_left(*r), std::move(on_replies));
        return;
    }
    // ASKING holds for one command only: it goes before each. A script goes as EVAL, since
    // EVALSHA's NOSCRIPT fallback would need an ASKING of its own.
    if (r->lua) {
        resp::request asking_one;
        asking_one.push("ASKING");
        c.async_exec_encoded(asking_one.payload() + eval_payload(*r->lua, r->payload), 2, time_left(*r),
                             std::move(on_replies));
        return;
    }
    auto rewritten = asking_before_each(r->payload);
    if (!rewritten) return finish(r, error::unexpected_reply, {});
    c.async_exec_encoded(rewritten->payload(), rewritten->size(), time_left(*r), std::move(on_replies));
}

void cluster_link::on_replies(const std::shared_ptr<request>& r, connection& from, error_code ec,
                              std::vector<resp::value> replies) {
    if (closed_) return complete(r, error::connection_closed, {});
    if (ec) {
        // A master that stopped answering may have been failed over: read the map again.
        if (ec != error::connection_closed && ec != boost::asio::error::operation_aborted) refresh();
        return complete(r, ec, {});
    }
    for (const auto& reply : replies) {
        if (!reply.is_error()) continue;
        if (auto to = read_redirect(reply); to && r->redirects < max_redirects) {
            ++r->redirects;
            node_address target = from.config().address;
            if (!to->host.empty()) target.host = to->host;
            target.port = to->port;
            target = remap_.apply(std::move(target));
            if (on_redirect_) on_redirect_(to->ask, r->slot, target);
            if (to->ask) {
                count(stats_.asked);
                return send(r, connection_to(target), true);
            }
            if (!reference_.knows(target, map_)) new_master(target);
            {
                std::lock_guard lock(status_mutex_);
                ++stats_.moved;
                map_.assign(r->slot, r->slot, target);
            }
            refresh();
            return send(r, connection_to(target), false);
        }
        if (reply.error_code() == "TRYAGAIN" && r->hand_back_tryagain) {
            count(stats_.tryagain);
            break;
        }
        if (reply.error_code() == "TRYAGAIN" && (r->deadline ? clock::now() + tryagain_pause < *r->deadline
                                                             : r->tryagains < max_tryagain_without_timeout)) {
            count(stats_.tryagain);
            ++r->tryagains;
            if (!r->timer) r->timer = std::make_unique<boost::asio::steady_timer>(strand_);
            r->timer->expires_after(tryagain_pause);
            r->timer->async_wait([weak = weak_from_this(), r](error_code) {
                if (const auto self = weak.lock()) return self->route(r);
                abandon(r);
            });
            return;
        }
        break;
    }
    // The lock layer judges a grant on the server that made it (answering()). A copy: the
    // handler may close the connection.
    const node_address answered_by = from.config().address;
    const auto* outer = std::exchange(answering_, &answered_by);
    complete(r, {}, std::move(replies));
    answering_ = outer;
}

bool cluster_link::settle(request& r) {
    if (r.done) return false;
    r.done = true;
    if (r.timer) r.timer->cancel();
    return true;
}

void cluster_link::call_handler(request& r, error_code ec, std::vector<resp::value> replies) {
    if (r.lua && r.trailer.empty()) {
        std::move(r.on_eval)(ec, replies.empty() ? resp::value{} : std::move(replies.front()));
    } else {
        std::move(r.on_exec)(ec, std::move(replies));
    }
}

void cluster_link::complete(const std::shared_ptr<request>& r, error_code ec,
                            std::vector<resp::value> replies) {
    if (settle(*r)) call_handler(*r, ec, std::move(replies));
}

void cluster_link::abandon(const std::shared_ptr<request>& r) {
    // The link is gone: this runs in a completion on its strand, not inside exec() or eval().
    complete(r, error::connection_closed, {});
}

void cluster_link::finish(const std::shared_ptr<request>& r, error_code ec,
                          std::vector<resp::value> replies) {
    if (!settle(*r)) return;
    // Posted: a request may end inside exec() or eval(), before its caller's initiation returned.
    boost::asio::post(strand_, [r, ec, replies = std::move(replies)]() mutable {
        call_handler(*r, ec, std::move(replies));
    });
}

void cluster_link::park(const std::shared_ptr<request>& r) {
    r->parked = true;
    parked_.push_back(r);
    if (r->deadline) {
        r->timer = std::make_unique<boost::asio::steady_timer>(strand_);
        r->timer->expires_at(*r->deadline);
        r->timer->async_wait([weak = weak_from_this(), r](error_code ec) {
            // Cancelled: the request left the queue (or its timer was replaced by a new park).
            if (ec == boost::asio::error::operation_aborted) return;
            const auto self = weak.lock();
            if (!self) return abandon(r);
            if (!r->parked || r->done) return;
            r->parked = false;
            std::erase(self->parked_, r);
            self->finish(r, error::request_timeout, {});
        });
    }
    refresh();
}

void cluster_link::refresh() {
    if (closed_) return;
    if (refreshing_) {
        refresh_again_ = true;
        return;
    }
    // Every failed request asks for a refresh: while a master is down, one read per
    // min_refresh_gap at most, not one per request.
    const auto now = clock::now();
    if (now < last_refresh_ + min_refresh_gap) {
        if (!refresh_soon_) arm_refresh_timer(last_refresh_ + min_refresh_gap - now);
        return;
    }
    refreshing_ = true;
    refresh_soon_ = false;
    last_refresh_ = now;
    // The masters first (they know the latest map), then the seeds.
    std::vector<node_address> candidates = map_.masters();
    for (const auto& seed : seeds_) {
        const bool known = std::any_of(candidates.begin(), candidates.end(), [&](const node_address& a) {
            return a.host == seed.host && a.port == seed.port;
        });
        if (!known) candidates.push_back(seed);
    }
    // Those connected first: a master that died (the likely reason for this refresh) would hold
    // the map up for a connect timeout.
    std::stable_partition(candidates.begin(), candidates.end(),
                          [this](const node_address& a) { return connected_to(a); });
    read_map_from(0, std::move(candidates), std::nullopt);
}

void cluster_link::read_map_from(std::size_t candidate, std::vector<node_address> candidates,
                                 std::optional<slot_map> best) {
    if (closed_) return;
    // Once some node gave a map, one that is not connected (maybe dead) cannot hold up its use
    // for a connect timeout.
    while (best && candidate < candidates.size() && !connected_to(candidates[candidate]))
        ++candidate;
    if (candidate >= candidates.size()) {
        // A map that serves only some slots (a failover under way) is the best there is; an
        // empty one never (a node that never joined the cluster knows nothing).
        if (best) return map_read(std::move(*best));
        refreshing_ = false;
        arm_refresh_timer();
        // No newer map: the requests that waited for one go by the old map.
        if (map_known_) reroute_parked();
        return;
    }
    auto& c = connection_to(candidates[candidate]);
    resp::request req;
    req.push("CLUSTER", shards_refused_ ? "SLOTS" : "SHARDS");
    c.async_exec(
        req, c.config().connect_timeout,
        boost::asio::bind_executor(
            strand_,
            [weak = weak_from_this(), candidate, candidates = std::move(candidates), best = std::move(best),
             from = &c](error_code ec, std::vector<resp::value> replies) mutable {
                const auto self = weak.lock();
                if (!self) return;
                std::string why;
                slot_map map;
                if (!ec && replies.size() != 1) ec = error::unexpected_reply;
                if (!ec && !self->shards_refused_ && lacks_cluster_shards(replies.front())) {
                    self->shards_refused_ = true;
                    return self->read_map_from(candidate, std::move(candidates), std::move(best));
                }
                const auto read = self->shards_refused_ ? read_cluster_slots : read_cluster_shards;
                if (!ec) ec = read(replies.front(), from->config().address, map, why, self->remap_);
                if (ec) {
                    const auto last = from->last_error();
                    auto text = "reading the slot map from " + endpoint(from->config().address) + ": " +
                                (why.empty() ? ec.message() : why);
                    if (last.code && !from->is_connected()) text += " (" + last.message + ")";
                    self->set_last_error({ec, std::move(text)});
                    return self->read_map_from(candidate + 1, std::move(candidates), std::move(best));
                }
                if (map.unserved() == 0) return self->map_read(std::move(map));
                // Partial or empty: another node may know the whole map.
                if (!map.empty() && (!best || map.unserved() < best->unserved())) best = std::move(map);
                self->read_map_from(candidate + 1, std::move(candidates), std::move(best));
            }));
}

void cluster_link::new_master(const node_address& address) {
    if (!on_new_master_) return;
    const auto c = connections_.find(endpoint(address));
    on_new_master_(address, c != connections_.end() ? c->second.get() : nullptr);
}

void cluster_link::map_read(slot_map map) {
    // A partial map (read while a failover was under way, or from a node that lags) makes
    // nobody new when the next whole map names its missing masters again (master_reference).
    for (const auto& m : reference_.on_map(map, map_))
        new_master(m);
    {
        std::lock_guard lock(status_mutex_);
        map_ = std::move(map);
        master_connections_.clear();
        map_known_ = true;
        last_error_ = {};
        ++stats_.refreshes;
        stats_.masters = map_.masters().size();
    }
    refreshing_ = false;
    close_gone_nodes();
    for (const auto& m : map_.masters())
        connection_to(m);
    reroute_parked();
    if (std::exchange(refresh_again_, false)) return refresh();
    arm_refresh_timer();
}

void cluster_link::reroute_parked() {
    for (auto& r : std::exchange(parked_, {})) {
        r->parked = false;
        if (r->timer) r->timer->cancel();
        route(r);
    }
}

void cluster_link::arm_refresh_timer(std::optional<clock::duration> after) {
    if (closed_) return;
    refresh_soon_ = after.has_value();
    refresh_timer_.expires_after(after ? *after : map_known_ ? refresh_interval : unknown_map_retry);
    refresh_timer_.async_wait([weak = weak_from_this()](error_code ec) {
        if (ec) return;
        if (auto self = weak.lock()) self->refresh();
    });
}

connection& cluster_link::master_connection(std::size_t master) {
    if (master >= master_connections_.size()) master_connections_.resize(map_.masters().size(), nullptr);
    auto& cached = master_connections_[master];
    if (!cached) cached = &connection_to(map_.masters()[master]);
    return *cached;
}

connection& cluster_link::connection_to(const node_address& address) {
    const auto name = endpoint(address);
    if (auto it = connections_.find(name); it != connections_.end()) return *it->second;
    auto fresh = std::make_unique<connection>(strand_, make_config_(address));
    fresh->async_connect([](error_code) {});
    std::lock_guard lock(status_mutex_);
    auto& made = *connections_.emplace(name, std::move(fresh)).first->second;
    stats_.connections = connections_.size();
    return made;
}

void cluster_link::close_gone_nodes() {
    const auto now = clock::now();
    std::erase_if(gone_, [&](const auto& g) { return now - g.first > gone_kept; });
    for (auto it = connections_.begin(); it != connections_.end();) {
        const auto& address = it->second->config().address;
        const bool seed = std::any_of(seeds_.begin(), seeds_.end(), [&](const node_address& a) {
            return a.host == address.host && a.port == address.port;
        });
        if (seed || map_.has_master(address)) {
            ++it;
            continue;
        }
        // A master failed over or removed: a dead one would be dialled again forever. Its
        // requests end with connection_closed at once; their handlers may still name it, so
        // it is kept a while.
        it->second->close();
        gone_.emplace_back(now, std::move(it->second));
        std::lock_guard lock(status_mutex_);
        it = connections_.erase(it);
        stats_.connections = connections_.size();
    }
}

void cluster_link::set_last_error(connection_error e) {
    std::lock_guard lock(status_mutex_);
    last_error_ = std::move(e);
}

void cluster_link::count(std::uint64_t& counter) {
    std::lock_guard lock(status_mutex_);
    ++counter;
}

connection* cluster_link::master_for(std::uint16_t slot) {
    const auto master = map_known_ ? map_.master_of(slot) : std::nullopt;
    return master ? &master_connection(*master) : nullptr;
}

const node_address* cluster_link::master_address(std::uint16_t slot) const {
    const auto master = map_known_ ? map_.master_of(slot) : std::nullopt;
    return master ? &map_.masters()[*master] : nullptr;
}

bool cluster_link::is_connected() const {
    std::lock_guard lock(status_mutex_);
    if (!map_known_) return false;
    return std::all_of(map_.masters().begin(), map_.masters().end(),
                       [this](const node_address& m) { return connected_to(m); });
}

bool cluster_link::connected_to(const node_address& address) const {
    const auto it = connections_.find(endpoint(address));
    return it != connections_.end() && it->second->is_connected();
}

connection_error cluster_link::last_error() const {
    std::lock_guard lock(status_mutex_);
    if (last_error_.code) return last_error_;
    for (const auto& m : map_.masters()) {
        const auto it = connections_.find(endpoint(m));
        if (it != connections_.end() && !it->second->is_connected()) {
            auto e = it->second->last_error();
            if (e.code) return e;
        }
    }
    return {};
}

cluster_stats cluster_link::stats() const {
    std::lock_guard lock(status_mutex_);
    return stats_;
}

}  // namespace redlock::redis::detail
