// SPDX-License-Identifier: BSL-1.0
// cluster_link's requests: routed by slot, sent on, redirected (MOVED, ASK), retried (TRYAGAIN)
// or parked until the first map. The map and the connections are in cluster_link_map.cpp.
#include "redis/cluster_link.hpp"

#include "redis/script_call.hpp"
#include <redlock/error.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <optional>
#include <utility>

namespace redlock::redis::detail {

namespace {

using clock = std::chrono::steady_clock;

// A pause before a TRYAGAIN is sent again: the keys of a migrating slot move in batches.
constexpr std::chrono::milliseconds tryagain_pause{10};
// Without a timeout, how often a TRYAGAIN is retried before its reply is handed back.
constexpr int max_tryagain_without_timeout = 100;

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

void cluster_link::reroute_parked() {
    for (auto& r : std::exchange(parked_, {})) {
        r->parked = false;
        if (r->timer) r->timer->cancel();
        route(r);
    }
}

}  // namespace redlock::redis::detail
