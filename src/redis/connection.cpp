#include "detail/completion.hpp"
#include "redis/context_shutdown.hpp"
#include "redis/handshake.hpp"
#include "redis/multiplexer.hpp"
#include "redis/reconnect_delay.hpp"
#include "redis/script_call.hpp"
#include "redis/tls_setup.hpp"
#include "redis/transport.hpp"
#include "resp/reply_parser.hpp"
#include <redlock/error.hpp>
#include <redlock/redis/connection.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
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

using clock_type = std::chrono::steady_clock;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
using exec_handler = asio::any_completion_handler<void(error_code, std::vector<resp::value>)>;
using connect_handler = asio::any_completion_handler<void(error_code)>;

bool cancels_written(asio::cancellation_type t) {
    return (t & (asio::cancellation_type::terminal | asio::cancellation_type::partial)) !=
           asio::cancellation_type::none;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// One async_exec in flight: the multiplexer entry plus what the I/O shell needs to complete it.
class exec_op final : public exec_entry {
public:
    exec_op(std::string payload, std::size_t commands, exec_handler h, asio::any_io_executor fallback)
        : exec_entry(std::move(payload), commands), handler_(std::move(h)), fallback_(std::move(fallback)) {}

    void on_complete(error_code ec) override {
        if (!handler_) return;
        complete_on_handler_executor(std::move(handler_), fallback_, ec, std::move(replies()));
    }

    // Completes it later, never inside the caller's initiating function.
    void complete_later(error_code ec) {
        if (!handler_) return;
        asio::post(fallback_, [h = std::move(handler_), ex = fallback_, ec]() mutable {
            complete_on_handler_executor(std::move(h), ex, ec, std::vector<resp::value>{});
        });
    }

private:
    exec_handler handler_;
    asio::any_io_executor fallback_;
};

// An internal request whose reply nobody waits for (the health-check PING).
class fire_and_forget final : public exec_entry {
public:
    using exec_entry::exec_entry;
    void on_complete(error_code) override {}
};

// A SUBSCRIBE or UNSUBSCRIBE: answered by pushes, or refused by an error reply.
class subscription_op final : public exec_entry {
public:
    subscription_op(std::string payload, std::size_t channels, std::string push_kind,
                    std::function<void(const resp::value&)> on_refused)
        : exec_entry(std::move(payload), channels, std::move(push_kind)),
          on_refused_(std::move(on_refused)) {}

    void on_complete(error_code ec) override {
        // A lost connection: on_connect subscribes again. Confirmed: nothing to do.
        if (ec || replies().empty() || !on_refused_) return;
        on_refused_(replies().front());
    }

private:
    std::function<void(const resp::value&)> on_refused_;
};

// RESP2 has no pushes: a subscribed connection's pub/sub answers are arrays whose first
// element names them. Only pub/sub commands and PING run on such a connection ("pong" arrays
// answer the PINGs, as replies).
bool is_pubsub_array(const resp::value& v) {
    if (v.kind != resp::type::array || v.elements.empty()) return false;
    const auto& kind = v.elements.front().str;
    return kind == "message" || kind == "subscribe" || kind == "unsubscribe" || kind == "pmessage" ||
           kind == "psubscribe" || kind == "punsubscribe";
}

struct connect_waiter {
    connect_handler handler;
};

// ---------------------------------------------------------------------------------------------
struct connection::impl final : std::enable_shared_from_this<impl>, context_shutdown_listener {
    impl(asio::any_io_executor ex, connection_config cfg)
        : ex_(ex),
          strand_(strand_for(ex)),
          cfg_(std::move(cfg)),
          transport_(strand_, cfg_.address, cfg_.tls),
          writer_cv_(strand_),
          request_timer_(strand_),
          connect_timer_(strand_),
          backoff_timer_(strand_),
          parser_(cfg_.limits),
          read_buffer_(64 * 1024),
          rng_(std::random_device{}()) {}

    // A caller that hands us a strand already serialises its own work on it: sharing it lets that
    // caller's requests and our completions run without a hop between two strands.
    static asio::strand<asio::any_io_executor> strand_for(const asio::any_io_executor& ex) {
        if (const auto* s = ex.target<asio::strand<asio::any_io_executor>>()) return *s;
        return asio::make_strand(ex);
    }

    // --- state, touched only on strand_ --------------------------------------------------------
    asio::any_io_executor ex_;
    asio::strand<asio::any_io_executor> strand_;
    connection_config cfg_;
    detail::transport transport_;
    asio::steady_timer writer_cv_;      // expires at max: a condition variable woken by cancel()
    asio::steady_timer request_timer_;  // one timer for every request's timeout: see arm_request_timer()
    clock_type::time_point request_timer_at_ = clock_type::time_point::max();  // max: not armed
    asio::steady_timer connect_timer_;
    asio::steady_timer backoff_timer_;
    multiplexer mux_;
    resp::reply_parser parser_;
    std::vector<char> read_buffer_;
    std::size_t read_pos_ = 0;  // unparsed bytes are [read_pos_, read_end_)
    std::size_t read_end_ = 0;
    bool running_ = false;
    bool closed_ = false;
    bool writer_waiting_ = false;
    bool flush_scheduled_ = false;
    std::string_view unwritten_;  // what flush() could not write at once: the writer finishes it
    error_code write_error_;      // flush() failed: the writer ends the connected phase with it
    bool connect_timed_out_ = false;
    bool connecting_ = false;  // a connect attempt is running: only then may its timer close the socket
    clock_type::time_point last_progress_{};
    std::vector<std::shared_ptr<connect_waiter>> connect_waiters_;
    bool first_attempt_done_ = false;
    bool subscribed_ = false;  // this connection wrote a SUBSCRIBE (RESP2: see is_pubsub_array)
    struct held_clock {
        std::weak_ptr<exec_op> op;
        clock_type::duration timeout;
    };
    std::vector<held_clock> clocks_on_hold_;  // requests admitted during the first attempt
    std::minstd_rand rng_;

    // --- readable from any thread ---------------------------------------------------------------
    std::atomic<bool> connected_{false};
    std::atomic<int> protocol_{0};
    mutable std::mutex info_mutex_;
    connection_error last_error_;
    connection_stats stats_;

    void set_last_error(error_code ec, std::string message) {
        std::lock_guard lk(info_mutex_);
        last_error_ = {ec, std::move(message)};
    }
    template <class F>
    void update_stats(F f) {
        std::lock_guard lk(info_mutex_);
        f(stats_);
    }

    std::string node() const { return cfg_.address.to_string(); }

    // --- requests --------------------------------------------------------------------------------
    // Queues a request from any thread; its handler completes on the handler's executor.
    void submit(std::string payload, std::size_t commands, std::chrono::milliseconds timeout,
                exec_handler h) {
        auto slot = asio::get_associated_cancellation_slot(h);
        auto op = std::make_shared<exec_op>(std::move(payload), commands, std::move(h), ex_);
        if (timeout > timeout.zero()) op->set_deadline(clock_type::now() + timeout);
        if (slot.is_connected()) {
            slot.assign([weak_self = weak_from_this(),
                         weak_op = std::weak_ptr<exec_op>(op)](asio::cancellation_type t) {
                auto s = weak_self.lock();
                if (!s) return;
                asio::post(s->strand_, [s, weak_op, t] {
                    if (auto o = weak_op.lock()) s->cancel_exec(o, t);
                });
            });
        }
        if (strand_.running_in_this_thread()) {
            admit(std::move(op));
            return;
        }
        asio::post(strand_,
                   [self = shared_from_this(), op = std::move(op)]() mutable { self->admit(std::move(op)); });
    }

    // On the strand, maybe inside the caller's initiating function: nothing completes inline here.
    void admit(std::shared_ptr<exec_op> op) {
        if (closed_) {
            op->complete_later(error::connection_closed);
            return;
        }
        if (refused_as_full()) {
            op->complete_later(error::queue_full);
            return;
        }
        if (running_ && !first_attempt_done_ && op->deadline() != clock_type::time_point::max()) {
            // The request's clock starts when the first connection attempt ends: a client connects
            // at construction, and an acquire made right after must not fail because the TCP and
            // TLS handshakes and the script loads took longer than a node's answer may. The
            // attempt itself is bounded by connect_timeout.
            clocks_on_hold_.push_back({op, op->deadline() - clock_type::now()});
            op->set_deadline(clock_type::time_point::max());
        } else {
            arm_request_timer(op->deadline());
        }
        enqueue(std::move(op));
    }

    // The bound on what waits, for requests and subscriptions alike: true (and counted) when
    // max_queued_requests are waiting.
    bool refused_as_full() {
        if (cfg_.max_queued_requests == 0 || mux_.queued() < cfg_.max_queued_requests) return false;
        update_stats([](connection_stats& s) { ++s.rejected_queue_full; });
        return true;
    }

    void start_held_clocks() {
        first_attempt_done_ = true;
        const auto now = clock_type::now();
        for (auto& [weak_op, timeout] : std::exchange(clocks_on_hold_, {})) {
            auto op = weak_op.lock();
            if (!op || op->status() == exec_entry::state::finished) continue;
            op->set_deadline(now + timeout);
            arm_request_timer(op->deadline());
        }
    }

    void enqueue(std::shared_ptr<exec_entry> e) {
        if (closed_) {
            e->on_complete(error::connection_closed);
            return;
        }
        mux_.add(std::move(e));
        // A long turn writes in slices, so the server works on the first requests while we
        // produce the rest: on few cores that overlap is worth more than fewer writes.
        if (mux_.staged() >= flush_slice && writer_waiting_ && !closed_) {
            flush();
        } else {
            schedule_flush();
        }
    }

    // Requests admitted in one turn of the strand leave in one write, made by flush() once the
    // handlers queued before it have run; the writer coroutine is only woken when the socket
    // cannot take everything at once.
    void schedule_flush() {
        if (flush_scheduled_ || !writer_waiting_) return;  // a busy writer takes them after its write
        flush_scheduled_ = true;
        asio::post(strand_, [self = shared_from_this()] {
            self->flush_scheduled_ = false;
            self->flush();
        });
    }

    static constexpr std::size_t flush_slice = 16;

    void flush() {
        if (!writer_waiting_ || closed_ || !mux_.has_staged()) return;
        if (!mux_.awaiting_replies()) last_progress_ = clock_type::now();
        std::string_view bytes = mux_.prepare_write();
        // TLS records are written by the writer coroutine (transport::write_now writes none).
        error_code ec;
        const std::size_t n = transport_.write_now(bytes, ec);
        if (!ec && n == bytes.size()) {
            update_stats([](connection_stats& s) { ++s.writes; });
            return;
        }
        unwritten_ = bytes.substr(n);
        write_error_ = ec;
        wake_writer();
    }

    void wake_writer() {
        if (writer_waiting_) {
            writer_waiting_ = false;
            writer_cv_.cancel();
        }
    }

    // The timer is set for the earliest deadline of the queued requests; requests with later
    // deadlines do not touch it, so a request costs no timer operation of its own.
    void arm_request_timer(clock_type::time_point deadline) {
        if (deadline >= request_timer_at_) return;
        request_timer_at_ = deadline;
        request_timer_.expires_at(deadline);
        request_timer_.async_wait([self = weak_from_this()](error_code ec) {
            auto s = self.lock();
            if (ec || !s || s->closed_) return;  // re-armed earlier, or closed
            s->request_timer_at_ = clock_type::time_point::max();
            auto next = s->mux_.expire(clock_type::now(), error::request_timeout);
            s->arm_request_timer(next);
        });
    }

    void cancel_exec(const std::shared_ptr<exec_op>& op, asio::cancellation_type t) {
        if (cancels_written(t) || op->status() == exec_entry::state::staged) {
            mux_.cancel(op, asio::error::operation_aborted);
        }
    }

    // --- connect waiters -----------------------------------------------------------------------
    void notify_connect_waiters(error_code ec) {
        auto waiters = std::move(connect_waiters_);
        connect_waiters_.clear();
        for (auto& w : waiters) {
            if (w->handler) complete_on_handler_executor(std::move(w->handler), ex_, ec);
        }
    }

    void cancel_connect_waiter(const std::shared_ptr<connect_waiter>& w) {
        auto it = std::find(connect_waiters_.begin(), connect_waiters_.end(), w);
        if (it == connect_waiters_.end()) return;
        connect_waiters_.erase(it);
        if (w->handler)
            complete_on_handler_executor(std::move(w->handler), ex_,
                                         error_code(asio::error::operation_aborted));
    }

    // --- lifecycle -------------------------------------------------------------------------------
    void start() {
        if (running_ || closed_) return;
        running_ = true;
        asio::co_spawn(strand_, run(shared_from_this()), [](std::exception_ptr ep) {
            // run() handles its own errors; an exception here is a bug we must not hide.
            if (ep) std::rethrow_exception(ep);
        });
    }

    // The context is going away: nothing will complete the requests still queued, and their
    // handlers may own the client that owns us. Drop them uncalled (asio drops its own so).
    void on_context_shutdown() noexcept override {
        closed_ = true;
        connected_ = false;
        mux_.drop_all();
        connect_waiters_.clear();
    }

    void close() {
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

    static asio::awaitable<void> run(std::shared_ptr<impl> self) {
        unsigned failures = 0;
        while (!self->closed_) {
            error_code ec = co_await self->connect_once();
            if (self->closed_) break;
            if (!self->first_attempt_done_) self->start_held_clocks();
            if (ec) {
                self->update_stats([](connection_stats& s) { ++s.connect_failures; });
                self->notify_connect_waiters(ec);
                co_await self->backoff(++failures);
                continue;
            }
            failures = 0;
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
            co_await self->backoff(1);
        }
    }

    asio::awaitable<void> backoff(unsigned failures) {
        backoff_timer_.expires_after(
            detail::reconnect_delay(cfg_.reconnect_min_delay, cfg_.reconnect_max_delay, failures, rng_));
        co_await backoff_timer_.async_wait(use_tuple);
    }

    // --- connect + handshake ---------------------------------------------------------------------
    asio::awaitable<error_code> connect_once() {
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
        std::string why;
        error_code ec = co_await transport_.open(why);
        if (ec && !why.empty()) set_last_error(ec, std::move(why));
        if (!ec) {
            ec = co_await handshake();
            // With TLS 1.3 the server checks our certificate after our side of the handshake is
            // done: its refusal arrives as the first exchange fails, as an alert (a TLS error) or
            // the connection's end. Any other failure is reported as what it is.
            if (ec && transport_.is_tls() && !connect_timed_out_ && !closed_ &&
                ec.category() != error_category()) {
                if (detail::is_tls_refusal(ec)) {
                    set_last_error(error::tls_failed,
                                   "TLS with " + node() + ": " + ec.message() +
                                       " right after the handshake (does the server require a "
                                       "client certificate: tls.cert_file?)");
                    ec = error::tls_failed;
                } else {
                    set_last_error(
                        ec, "the Redis handshake over TLS with " + node() + " failed: " + ec.message());
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
            set_last_error(
                ec, stage + " timed out after " + std::to_string(cfg_.connect_timeout.count()) + " ms");
        }
        if (ec) transport_.close();
        co_return ec;
    }

    // Sends `req` and reads exactly req.size() replies, before the reader/writer loops run.
    asio::awaitable<error_code> roundtrip(const resp::request& req, std::vector<resp::value>& replies) {
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

    asio::awaitable<error_code> read_reply(resp::value& out) {
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

    // Feeds buffered bytes to the parser until it holds a complete reply or the bytes run out.
    error_code parse_buffered() {
        if (parser_.done()) return {};
        read_pos_ += parser_.feed(std::string_view(read_buffer_.data() + read_pos_, read_end_ - read_pos_));
        if (auto ec = parser_.error()) {
            set_last_error(ec, "malformed reply from " + node() + ": " + ec.message());
            return ec;
        }
        return {};
    }

    error_code fail_handshake(detail::handshake_failure failure) {
        set_last_error(failure.ec, std::move(failure.message));
        return failure.ec;
    }

    // HELLO (and AUTH), then the setup in one write: handshake.hpp says what each answer means.
    asio::awaitable<error_code> handshake() {
        const auto& a = cfg_.address;
        const auto name = node();
        std::vector<resp::value> replies;
        const auto hello = detail::hello_request(a);
        if (auto ec = co_await roundtrip(hello, replies)) co_return ec;
        auto greeted = detail::read_hello(replies[0], name);
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

    // --- the connected phase ---------------------------------------------------------------------
    asio::awaitable<error_code> serve() {
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

    static asio::awaitable<error_code> reader(std::shared_ptr<impl> self) {
        for (;;) {
            // Dispatch every complete reply already buffered, then read more.
            for (;;) {
                if (auto ec = self->parse_buffered()) co_return ec;
                if (!self->parser_.done()) break;
                resp::value v = self->parser_.take();
                if (self->subscribed_ && self->protocol_ == 2 && is_pubsub_array(v))
                    v.kind = resp::type::push;
                auto outcome = self->mux_.on_reply(v);
                // A completion runs inline and may have closed the connection.
                if (self->closed_) co_return asio::error::operation_aborted;
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
                        self->set_last_error(error::unexpected_reply, "reply from " + self->node() +
                                                                          " that no request was waiting for");
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

    static asio::awaitable<error_code> writer(std::shared_ptr<impl> self) {
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

    static asio::awaitable<error_code> health(std::shared_ptr<impl> self) {
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
                    self->set_last_error(error::health_check_failed,
                                         self->node() + " sent nothing for " +
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
};

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

void connection::send_subscription(const resp::request& req, std::string push_kind, std::size_t channels,
                                   std::function<void(const resp::value&)> on_refused) {
    if (req.empty() || channels == 0) return;
    asio::dispatch(impl_->strand_, [self = impl_, payload = req.payload(), kind = std::move(push_kind),
                                    channels, on_refused = std::move(on_refused)]() mutable {
        if (self->refused_as_full()) {
            // Refused as a request would be. An UNSUBSCRIBE dropped leaves a channel whose
            // messages nobody reads; a SUBSCRIBE's caller falls back from the refusal, which
            // comes later, never inside the call (it may be in the middle of its own bookkeeping).
            resp::value full;
            full.kind = resp::type::error;
            full.str = "QUEUEFULL the connection to " + self->node() + " already has max_queued_requests (" +
                       std::to_string(self->cfg_.max_queued_requests) + ") requests waiting";
            self->set_last_error(error::queue_full, full.str);
            if (on_refused) {
                asio::post(self->strand_, [on_refused = std::move(on_refused), full = std::move(full)] {
                    on_refused(full);
                });
            }
            return;
        }
        auto refused = [weak = std::weak_ptr<impl>(self),
                        on_refused = std::move(on_refused)](const resp::value& v) {
            if (auto s = weak.lock()) {
                s->set_last_error(error::server_error,
                                  "node " + s->node() + " refused a subscription: " + v.str);
            }
            if (on_refused) on_refused(v);
        };
        self->subscribed_ = self->subscribed_ || kind == "subscribe";
        self->enqueue(std::make_shared<subscription_op>(std::move(payload), channels, std::move(kind),
                                                        std::move(refused)));
    });
}

void connection::async_connect_impl(connect_handler h) {
    auto slot = asio::get_associated_cancellation_slot(h);
    // Move-constructed: any_completion_handler's move assignment is broken in Boost 1.81.
    auto waiter = std::make_shared<connect_waiter>(connect_waiter{std::move(h)});
    if (slot.is_connected()) {
        slot.assign([weak_self = std::weak_ptr<impl>(impl_),
                     weak_waiter = std::weak_ptr<connect_waiter>(waiter)](asio::cancellation_type) {
            auto s = weak_self.lock();
            if (!s) return;
            asio::post(s->strand_, [s, weak_waiter] {
                if (auto w = weak_waiter.lock()) s->cancel_connect_waiter(w);
            });
        });
    }
    asio::post(impl_->strand_, [self = impl_, waiter = std::move(waiter)]() mutable {
        if (self->closed_) {
            complete_on_handler_executor(std::move(waiter->handler), self->ex_,
                                         error_code(error::connection_closed));
            return;
        }
        if (self->connected_) {
            complete_on_handler_executor(std::move(waiter->handler), self->ex_, error_code());
            return;
        }
        self->connect_waiters_.push_back(std::move(waiter));
        self->start();
    });
}

void connection::async_exec_impl(std::string payload, std::size_t commands, std::chrono::milliseconds timeout,
                                 exec_handler h) {
    if (commands == 0) {
        // Nothing to send: complete as if posted, never inline.
        asio::post(impl_->strand_, [h = std::move(h), ex = impl_->ex_]() mutable {
            complete_on_handler_executor(std::move(h), ex, error_code{}, std::vector<resp::value>{});
        });
        return;
    }
    impl_->submit(std::move(payload), commands, timeout, std::move(h));
}

std::string connection::make_evalsha(const script& s, std::span<const std::string_view> keys,
                                     std::span<const std::string_view> args) {
    return detail::evalsha_payload(s, keys, args);
}

void connection::async_eval_impl(script s, std::string evalsha_payload, std::chrono::milliseconds timeout,
                                 asio::any_completion_handler<void(error_code, resp::value)> h) {
    // Runs after each round trip. It exposes the user's executor and cancellation slot, so the
    // EVAL retry is cancelled and completed exactly like the EVALSHA before it.
    struct step {
        std::shared_ptr<impl> self;
        script s;
        std::string evalsha;  // kept for the NOSCRIPT fallback; empty once it was used
        std::chrono::milliseconds timeout;
        asio::any_completion_handler<void(error_code, resp::value)> handler;

        using cancellation_slot_type = asio::cancellation_slot;
        cancellation_slot_type get_cancellation_slot() const noexcept {
            return handler.get_cancellation_slot();
        }
        using executor_type = asio::any_completion_executor;
        executor_type get_executor() const noexcept {
            return asio::get_associated_executor(handler, self->ex_);
        }

        void operator()(error_code ec, std::vector<resp::value> replies) {
            if (!ec && replies.size() != 1) ec = error::unexpected_reply;
            if (ec) {
                std::move(handler)(ec, resp::value{});
                return;
            }
            if (!evalsha.empty() && detail::lacks_script(replies[0])) {
                std::string eval = detail::eval_payload(s, evalsha);
                evalsha.clear();
                auto target = self;
                target->submit(std::move(eval), 1, timeout, std::move(*this));
                return;
            }
            std::move(handler)(error_code{}, std::move(replies[0]));
        }
    };
    std::string first = evalsha_payload;
    impl_->submit(std::move(first), 1, timeout,
                  step{impl_, s, std::move(evalsha_payload), timeout, std::move(h)});
}

}  // namespace redlock::redis
