// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_CONNECTION_IMPL_HPP
#define REDLOCK_REDIS_CONNECTION_IMPL_HPP

// The inside of redis::connection, shared by its two files: connection.cpp (the lifecycle:
// connect, handshake, reconnect; the reader, writer and health loops) and
// connection_requests.cpp (admission, flushing, timeouts, cancellation, scripts, subscriptions).

#include "detail/completion.hpp"
#include "redis/context_shutdown.hpp"
#include "redis/handshake.hpp"
#include "redis/multiplexer.hpp"
#include "redis/serial_executor.hpp"
#include "redis/transport.hpp"
#include "resp/reply_parser.hpp"
#include <redlock/redis/connection.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace redlock::redis {

namespace detail {
using clock_type = std::chrono::steady_clock;
using exec_handler =
    boost::asio::any_completion_handler<void(boost::system::error_code, std::vector<resp::value>)>;
using connect_handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;
}  // namespace detail

// One async_exec in flight: the multiplexer entry plus what the I/O shell needs to complete it.
class exec_op final : public exec_entry {
public:
    exec_op(std::string payload, std::size_t commands, detail::exec_handler h, asio::any_io_executor fallback)
        : exec_entry(std::move(payload), commands), handler_(std::move(h)), fallback_(std::move(fallback)) {}

    void on_complete(error_code ec) override {
        if (!handler_) return;
        redlock::detail::complete_on_handler_executor(std::move(handler_), fallback_, ec,
                                                      std::move(replies()));
    }

    // Completes it later, never inside the caller's initiating function.
    void complete_later(error_code ec) {
        if (!handler_) return;
        asio::post(fallback_, [h = std::move(handler_), ex = fallback_, ec]() mutable {
            redlock::detail::complete_on_handler_executor(std::move(h), ex, ec, std::vector<resp::value>{});
        });
    }

private:
    detail::exec_handler handler_;
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

struct connect_waiter {
    detail::connect_handler handler;
};

// ---------------------------------------------------------------------------------------------
struct connection::impl final : std::enable_shared_from_this<impl>, context_shutdown_listener {
    using clock_type = detail::clock_type;
    using exec_handler = detail::exec_handler;

    impl(asio::any_io_executor ex, connection_config cfg)
        : ex_(ex),
          // A caller that hands us a strand already serialises its own work on it: sharing it
          // lets that caller's requests and our completions run without a hop between two strands.
          strand_(detail::make_serial(ex)),
          cfg_(std::move(cfg)),
          target_(cfg_.address),
          transport_(strand_, cfg_.address, cfg_.tls),
          writer_cv_(strand_),
          request_timer_(strand_),
          connect_timer_(strand_),
          backoff_timer_(strand_),
          parser_(cfg_.limits),
          read_buffer_(64 * 1024),
          rng_(std::random_device{}()) {}

    // --- state, touched only on strand_ --------------------------------------------------------
    asio::any_io_executor ex_;
    detail::serial_executor strand_;
    connection_config cfg_;
    node_address target_;  // cfg_.address, or where cfg_.locate said the server is
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
    bool reconnect_now_ = false;  // reconnect() asked: the next attempt waits for no delay
    bool subscribed_ = false;     // this connection wrote a SUBSCRIBE (RESP2: see is_pubsub_array)
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

    void set_last_error(error_code ec, std::string message, bool permanent = false) {
        std::lock_guard lk(info_mutex_);
        last_error_ = {ec, std::move(message), permanent};
    }
    template <class F>
    void update_stats(F f) {
        std::lock_guard lk(info_mutex_);
        f(stats_);
    }

    std::string node() const { return target_.to_string(); }

    // --- requests --------------------------------------------------------------------------------
    // Queues a request from any thread; its handler completes on the handler's executor.
    void submit(std::string payload, std::size_t commands, std::chrono::milliseconds timeout, exec_handler h);

    // On the strand, maybe inside the caller's initiating function: nothing completes inline here.
    void admit(std::shared_ptr<exec_op> op);

    // The bound on what waits, for requests and subscriptions alike: true (and counted) when
    // max_queued_requests are waiting.
    bool refused_as_full();

    void start_held_clocks();

    void enqueue(std::shared_ptr<exec_entry> e);

    // Requests admitted in one turn of the strand leave in one write, made by flush() once the
    // handlers queued before it have run; the writer coroutine is only woken when the socket
    // cannot take everything at once.
    void schedule_flush();

    static constexpr std::size_t flush_slice = 16;

    void flush();

    void wake_writer();

    // The timer is set for the earliest deadline of the queued requests; requests with later
    // deadlines do not touch it, so a request costs no timer operation of its own.
    void arm_request_timer(clock_type::time_point deadline);

    void cancel_exec(const std::shared_ptr<exec_op>& op, asio::cancellation_type t);

    // --- connect waiters -----------------------------------------------------------------------
    void notify_connect_waiters(error_code ec);

    void cancel_connect_waiter(const std::shared_ptr<connect_waiter>& w);

    // --- lifecycle -------------------------------------------------------------------------------
    void start();

    // The context is going away: nothing will complete the requests still queued, and their
    // handlers may own the client that owns us. Drop them uncalled (asio drops its own so).
    void on_context_shutdown() noexcept override;

    void close();

    void reconnect();

    static asio::awaitable<void> run(std::shared_ptr<impl> self);

    asio::awaitable<void> backoff(unsigned failures);

    // --- connect + handshake ---------------------------------------------------------------------
    asio::awaitable<error_code> connect_once();

    // cfg_.locate's answer becomes target_; false (last_error set) if it failed.
    asio::awaitable<error_code> locate();

    // Sends `req` and reads exactly req.size() replies, before the reader/writer loops run.
    asio::awaitable<error_code> roundtrip(const resp::request& req, std::vector<resp::value>& replies);

    asio::awaitable<error_code> read_reply(resp::value& out);

    // Feeds buffered bytes to the parser until it holds a complete reply or the bytes run out.
    error_code parse_buffered();

    error_code fail_handshake(detail::handshake_failure failure);

    // HELLO (and AUTH), then the setup in one write: handshake.hpp says what each answer means.
    asio::awaitable<error_code> handshake();

    // --- the connected phase ---------------------------------------------------------------------
    asio::awaitable<error_code> serve();

    static asio::awaitable<error_code> reader(std::shared_ptr<impl> self);

    static asio::awaitable<error_code> writer(std::shared_ptr<impl> self);

    static asio::awaitable<error_code> health(std::shared_ptr<impl> self);
};

}  // namespace redlock::redis

#endif
