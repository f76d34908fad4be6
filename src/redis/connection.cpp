// SPDX-License-Identifier: BSL-1.0
#include "detail/completion.hpp"
#include "redis/connection_impl.hpp"
#include "redis/handshake.hpp"
#include "redis/multiplexer.hpp"
#include "redis/reconnect_delay.hpp"
#include "redis/tls_setup.hpp"
#include "redis/transport.hpp"
#include "resp/reply_parser.hpp"
#include <redlock/error.hpp>
#include <redlock/redis/connection.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>
#include <string_view>
#include <tuple>
#include <utility>

namespace redlock::redis {

using redlock::detail::complete_on_handler_executor;

namespace {

using detail::clock_type;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// RESP2 has no pushes: a subscribed connection's pub/sub answers are arrays whose first
// element names them. Only pub/sub commands and PING run on such a connection ("pong" arrays
// answer the PINGs, as replies).
bool is_pubsub_array(const resp::value& v) {
    if (v.kind != resp::type::array || v.elements.empty()) return false;
    const auto& kind = v.elements.front().str;
    return kind == "message" || kind == "subscribe" || kind == "unsubscribe" || kind == "pmessage" ||
           kind == "psubscribe" || kind == "punsubscribe" || kind == "smessage" || kind == "ssubscribe" ||
           kind == "sunsubscribe";
}

}  // namespace

void connection::impl::start() {
    if (running_ || closed_) return;
    running_ = true;
    asio::co_spawn(strand_, run(shared_from_this()), [](std::exception_ptr ep) {
        // run() handles its own errors; an exception here is a bug we must not hide.
        if (ep) std::rethrow_exception(ep);
    });
}

void connection::impl::on_context_shutdown() noexcept {
    closed_ = true;
    connected_ = false;
    mux_.drop_all();
    connect_waiters_.clear();
}

void connection::impl::close() {
    if (closed_) return;
    closed_ = true;
    connected_ = false;
    transport_.abort();
    connect_timer_.cancel();
    backoff_timer_.cancel();
    request_timer_.cancel();
    writer_cv_.cancel();
    mux_.fail_all(error::connection_closed);
    notify_connect_waiters(error::connection_closed);
}

asio::awaitable<void> connection::impl::run(std::shared_ptr<impl> self) {
    unsigned failures = 0;
    bool down_told = false;  // on_disconnect said so since the last handshake
    const auto tell_down = [&](error_code ec) {
        if (down_told || !self->cfg_.on_disconnect) return;
        down_told = true;
        std::string why;
        {
            std::lock_guard lk(self->info_mutex_);
            why = self->last_error_.message;
        }
        self->cfg_.on_disconnect(ec, why);
    };
    while (!self->closed_) {
        error_code ec = co_await self->connect_once();
        if (self->closed_) break;
        if (!self->first_attempt_done_) self->start_held_clocks();
        if (ec) {
            self->update_stats([](connection_stats& s) { ++s.connect_failures; });
            self->notify_connect_waiters(ec);
            tell_down(ec);
            co_await self->backoff(++failures);
            continue;
        }
        failures = 0;
        down_told = false;
        if (self->cfg_.on_connect) self->cfg_.on_connect();
        self->connected_ = true;
        self->update_stats([](connection_stats& s) { ++s.connects; });
        self->notify_connect_waiters(ec);

        ec = co_await self->serve();

        self->connected_ = false;
        self->transport_.close();
        if (self->closed_) break;
        self->update_stats([](connection_stats& s) { ++s.disconnects; });
        // Protocol errors are the more useful cause; a plain drop means the reply was lost.
        bool protocol = ec.category() == error_category() && ec != error::health_check_failed;
        self->mux_.on_connection_lost(protocol ? ec : error_code(error::reply_lost));
        tell_down(ec);
        co_await self->backoff(1);
    }
}

void connection::impl::reconnect() {
    // An attempt under way asks where to go anew anyway.
    if (closed_ || connecting_ || !running_) return;
    if (connected_) {
        // The connected phase ends as it does when the server goes away, and the attempt after
        // it waits for no delay.
        reconnect_now_ = true;
        transport_.abort();
    } else {
        backoff_timer_.cancel();
    }
}

asio::awaitable<void> connection::impl::backoff(unsigned failures) {
    if (std::exchange(reconnect_now_, false)) co_return;
    backoff_timer_.expires_after(
        detail::reconnect_delay(cfg_.reconnect_min_delay, cfg_.reconnect_max_delay, failures, rng_));
    co_await backoff_timer_.async_wait(use_tuple);
}

asio::awaitable<error_code> connection::impl::connect_once() {
    connect_timed_out_ = false;
    connecting_ = true;
    read_pos_ = read_end_ = 0;
    parser_.reset();
    connect_timer_.expires_after(cfg_.connect_timeout);
    connect_timer_.async_wait([self = weak_from_this()](error_code ec) {
        auto s = self.lock();
        // An expiry already queued when the attempt finished must not close the new connection.
        if (ec || !s || !s->connecting_) return;
        // Closing the socket is what unblocks a connect or a read from a frozen server.
        s->connect_timed_out_ = true;
        s->transport_.abort();
    });
    error_code ec;
    if (cfg_.locate) ec = co_await locate();
    std::string why;
    if (!ec) ec = co_await transport_.open(why);
    if (ec && !why.empty()) set_last_error(ec, std::move(why), transport_.refused_for_good());
    if (!ec) {
        ec = co_await handshake();
        // With TLS 1.3 the server checks our certificate after our side of the handshake is
        // done: its refusal arrives as the first exchange fails, as an alert (a TLS error) or
        // the connection's end. Any other failure is reported as what it is.
        if (ec && transport_.is_tls() && !connect_timed_out_ && !closed_ &&
            ec.category() != error_category()) {
            if (detail::is_tls_refusal(ec)) {
                // The server refused our certificate, or its absence, by an alert or by closing
                // the connection: the next attempt meets it again. (A server that restarts at
                // this very moment is taken for a refusal too; the connection tries again all
                // the same, and a later acquire finds it up.)
                set_last_error(error::tls_failed,
                               "TLS with " + node() + ": " + ec.message() +
                                   " right after the handshake (does the server require a "
                                   "client certificate: tls.cert_file?)",
                               true);
                ec = error::tls_failed;
            } else {
                set_last_error(ec,
                               "the Redis handshake over TLS with " + node() + " failed: " + ec.message());
            }
        }
    }
    connecting_ = false;
    connect_timer_.cancel();
    if (closed_) co_return error::connection_closed;
    if (ec && connect_timed_out_) {
        ec = error::connect_timeout;
        // A TLS client talking to a plaintext port waits for a ServerHello that never comes.
        const std::string stage = transport_.was_handshaking_tls()
                                      ? "the TLS handshake with " + node() + " (is it a TLS port?)"
                                      : "connecting to " + node();
        set_last_error(ec,
                       stage + " timed out after " + std::to_string(cfg_.connect_timeout.count()) + " ms");
    }
    if (ec) transport_.close();
    co_return ec;
}

asio::awaitable<error_code> connection::impl::locate() {
    auto [ec, where, why] =
        co_await asio::async_initiate<decltype(use_tuple), void(error_code, node_address, std::string)>(
            // Half the attempt's time: a locate that fails says why before the attempt times out.
            [this](auto handler) { cfg_.locate(cfg_.connect_timeout / 2, std::move(handler)); }, use_tuple);
    if (closed_ || connect_timed_out_) co_return error::connection_closed;
    if (ec) {
        set_last_error(ec, std::move(why));
        co_return ec;
    }
    target_ = where;
    transport_.retarget(std::move(where));
    co_return error_code{};
}

asio::awaitable<error_code> connection::impl::roundtrip(const resp::request& req,
                                                        std::vector<resp::value>& replies) {
    auto [wec, n] = co_await transport_.write_all(asio::buffer(req.payload()));
    (void)n;
    if (wec) co_return wec;
    replies.clear();
    while (replies.size() < req.size()) {
        resp::value v;
        error_code ec = co_await read_reply(v);
        if (ec) co_return ec;
        if (v.kind == resp::type::push) continue;
        replies.push_back(std::move(v));
    }
    co_return error_code{};
}

asio::awaitable<error_code> connection::impl::read_reply(resp::value& out) {
    for (;;) {
        if (error_code ec = parse_buffered(); ec) co_return ec;
        if (parser_.done()) {
            out = parser_.take();
            co_return error_code{};
        }
        auto [ec, n] = co_await transport_.read_some(asio::buffer(read_buffer_));
        if (ec) co_return ec;
        read_pos_ = 0;
        read_end_ = n;
    }
}

error_code connection::impl::parse_buffered() {
    if (parser_.done()) return {};
    read_pos_ += parser_.feed(std::string_view(read_buffer_.data() + read_pos_, read_end_ - read_pos_));
    if (auto ec = parser_.error()) {
        set_last_error(ec, "malformed reply from " + node() + ": " + ec.message());
        return ec;
    }
    return {};
}

error_code connection::impl::fail_handshake(detail::handshake_failure failure) {
    set_last_error(failure.ec, std::move(failure.message), failure.permanent);
    return failure.ec;
}

asio::awaitable<error_code> connection::impl::handshake() {
    const auto& a = target_;
    const auto name = node();
    std::vector<resp::value> replies;
    const auto hello = detail::hello_request(a);
    if (auto ec = co_await roundtrip(hello, replies)) co_return ec;
    auto greeted = detail::read_hello(replies[0], name, cfg_.min_server_version);
    if (greeted.failure.ec) co_return fail_handshake(std::move(greeted.failure));
    if (const auto auth = detail::auth_request(a); greeted.protocol == 2 && !auth.empty()) {
        if (auto ec = co_await roundtrip(auth, replies)) co_return ec;
        if (auto failure = detail::read_auth(replies[0], name); failure.ec)
            co_return fail_handshake(std::move(failure));
    }
    const detail::setup_plan setup(cfg_);
    if (!setup.request().empty()) {
        if (auto ec = co_await roundtrip(setup.request(), replies)) co_return ec;
        if (auto failure = setup.check(replies, name); failure.ec)
            co_return fail_handshake(std::move(failure));
        if (auto theirs = setup.setup_replies(replies); cfg_.on_setup_replies && !theirs.empty())
            cfg_.on_setup_replies(theirs);
        if (cfg_.on_server_info) cfg_.on_server_info(setup.server_info(replies));
    }
    protocol_ = greeted.protocol;
    co_return error_code{};
}

asio::awaitable<error_code> connection::impl::serve() {
    using namespace asio::experimental;
    last_progress_ = clock_type::now();
    unwritten_ = {};
    write_error_ = {};
    auto self = shared_from_this();
    auto reader_op = asio::co_spawn(strand_, reader(self), asio::deferred);
    auto writer_op = asio::co_spawn(strand_, writer(self), asio::deferred);
    auto health_op = asio::co_spawn(strand_, health(self), asio::deferred);
    auto result =
        co_await make_parallel_group(std::move(reader_op), std::move(writer_op), std::move(health_op))
            .async_wait(wait_for_one(), asio::use_awaitable);
    const auto& order = std::get<0>(result);
    error_code ec;
    switch (order[0]) {
        case 0:
            ec = std::get<2>(result);
            break;
        case 1:
            ec = std::get<4>(result);
            break;
        default:
            ec = std::get<6>(result);
            break;
    }
    if (!ec) ec = asio::error::operation_aborted;
    if (!closed_ && ec.category() != error_category()) {
        set_last_error(ec, "connection to " + node() + " lost: " + ec.message());
    }
    co_return ec;
}

asio::awaitable<error_code> connection::impl::reader(std::shared_ptr<impl> self) {
    for (;;) {
        // Dispatch every complete reply already buffered, then read more.
        for (;;) {
            if (auto ec = self->parse_buffered()) co_return ec;
            if (!self->parser_.done()) break;
            resp::value v = self->parser_.take();
            if (self->subscribed_ && self->protocol_ == 2 && is_pubsub_array(v)) v.kind = resp::type::push;
            // A master demoted under us (a Sentinel failover whose switch we missed) refuses
            // writes: ask where the master is now rather than meet the refusal until it is told.
            const bool demoted = self->cfg_.require_master && v.is_error() && v.error_code() == "READONLY";
            auto outcome = self->mux_.on_reply(v);
            // A completion runs inline and may have closed the connection.
            if (self->closed_) co_return asio::error::operation_aborted;
            if (demoted) {
                self->set_last_error(
                    error::master_not_found,
                    self->node() + " answered READONLY: it is a replica now; asking again for the master");
                self->reconnect();
            }
            switch (outcome) {
                case multiplexer::reply_outcome::matched:
                    break;
                case multiplexer::reply_outcome::push:
                    if (self->cfg_.on_push) {
                        self->cfg_.on_push(v);
                    } else {
                        self->update_stats([](connection_stats& s) { ++s.pushes_dropped; });
                    }
                    break;
                case multiplexer::reply_outcome::unexpected:
                    self->set_last_error(error::unexpected_reply,
                                         "reply from " + self->node() + " that no request was waiting for");
                    co_return error::unexpected_reply;
            }
        }
        auto [ec, n] = co_await self->transport_.read_some(asio::buffer(self->read_buffer_));
        if (ec) co_return ec;
        self->read_pos_ = 0;
        self->read_end_ = n;
        self->last_progress_ = clock_type::now();
    }
}

asio::awaitable<error_code> connection::impl::writer(std::shared_ptr<impl> self) {
    for (;;) {
        if (self->write_error_) co_return std::exchange(self->write_error_, {});
        if (!self->unwritten_.empty()) {
            // The rest of a write that flush() began; the view stays valid until the next
            // prepare_write().
            auto [ec, n] = co_await self->transport_.write_all(asio::buffer(self->unwritten_));
            (void)n;
            self->unwritten_ = {};
            if (ec) co_return ec;
            self->update_stats([](connection_stats& s) { ++s.writes; });
            continue;
        }
        while (!self->mux_.has_staged()) {
            self->writer_waiting_ = true;
            self->writer_cv_.expires_at(clock_type::time_point::max());
            co_await self->writer_cv_.async_wait(use_tuple);
            self->writer_waiting_ = false;
            auto cs = co_await asio::this_coro::cancellation_state;
            if (cs.cancelled() != asio::cancellation_type::none || self->closed_) {
                co_return asio::error::operation_aborted;
            }
            if (self->write_error_ || !self->unwritten_.empty()) break;
        }
        if (self->write_error_ || !self->unwritten_.empty()) continue;
        // The health check measures silence from the moment a reply is first owed.
        if (!self->mux_.awaiting_replies()) self->last_progress_ = clock_type::now();
        std::string_view bytes = self->mux_.prepare_write();
        auto [ec, n] = co_await self->transport_.write_all(asio::buffer(bytes));
        (void)n;
        if (ec) co_return ec;
        self->update_stats([](connection_stats& s) { ++s.writes; });
    }
}

asio::awaitable<error_code> connection::impl::health(std::shared_ptr<impl> self) {
    const auto interval = self->cfg_.health_check_interval;
    asio::steady_timer timer(self->strand_);
    for (;;) {
        timer.expires_after(interval > interval.zero() ? interval : std::chrono::hours(24 * 365));
        auto [ec] = co_await timer.async_wait(use_tuple);
        if (ec) co_return ec;
        if (interval <= interval.zero()) continue;
        auto now = clock_type::now();
        if (self->mux_.awaiting_replies()) {
            if (now - self->last_progress_ >= 2 * interval) {
                self->set_last_error(error::health_check_failed, self->node() + " sent nothing for " +
                                                                     std::to_string(2 * interval.count()) +
                                                                     " ms while replies were owed");
                co_return error::health_check_failed;
            }
        } else if (!self->mux_.has_staged()) {
            resp::request ping;
            ping.push("PING");
            self->enqueue(std::make_shared<fire_and_forget>(ping.payload(), 1));
        }
    }
}

// ---------------------------------------------------------------------------------------------
connection::connection(executor_type ex, connection_config cfg)
    : impl_(std::make_shared<impl>(std::move(ex), std::move(cfg))) {
    call_on_shutdown(asio::query(impl_->ex_, asio::execution::context), impl_);
}

connection::~connection() {
    close();
}

connection::executor_type connection::get_executor() const noexcept {
    return impl_->ex_;
}

const connection_config& connection::config() const noexcept {
    return impl_->cfg_;
}

void connection::reconnect() {
    asio::dispatch(impl_->strand_, [self = impl_] { self->reconnect(); });
}

void connection::close() {
    asio::dispatch(impl_->strand_, [self = impl_] { self->close(); });
}

bool connection::is_connected() const noexcept {
    return impl_->connected_;
}

int connection::protocol() const noexcept {
    return impl_->protocol_;
}

connection_error connection::last_error() const {
    std::lock_guard lk(impl_->info_mutex_);
    return impl_->last_error_;
}

connection_stats connection::stats() const {
    std::lock_guard lk(impl_->info_mutex_);
    return impl_->stats_;
}

}  // namespace redlock::redis
