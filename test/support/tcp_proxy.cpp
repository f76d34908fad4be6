// SPDX-License-Identifier: BSL-1.0
#include "tcp_proxy.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <atomic>
#include <deque>
#include <exception>
#include <future>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

namespace redlock::test {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;
using boost::system::error_code;

namespace detail {

// Bytes read from one side, to be written to the other no earlier than `due`. A chunk with
// `eof` set stands for the end of the stream: once everything before it is written, the
// session is closed.
struct tcp_proxy_chunk {
    steady::time_point due;
    std::string bytes;
    bool eof = false;
    bool held = false;  // due only once tcp_proxy::deliver_held() says so
};

// One direction of a session: a FIFO drained by a single writer, so delays never reorder bytes.
// The writer sleeps on `wake` until the front chunk is due, or until something is queued.
struct tcp_proxy_queue {
    explicit tcp_proxy_queue(asio::io_context& ioc) : wake(ioc) {}
    std::deque<tcp_proxy_chunk> chunks;
    asio::steady_timer wake;
};

// One client connection and its upstream connection. Touched only on the proxy thread.
struct tcp_proxy_session {
    tcp_proxy_session(tcp::socket accepted, asio::io_context& ioc)
        : client(std::move(accepted)), upstream(ioc), to_server(ioc), to_client(ioc) {}
    tcp::socket client;
    tcp::socket upstream;
    tcp_proxy_queue to_server;
    tcp_proxy_queue to_client;
    bool closed = false;
    bool lost_bytes = false;           // a mode discarded some of what it read (see tcp_proxy::set_mode)
    bool lost_requests = false;        // ... of the requests: none after the hole reach the server
    bool lost_replies = false;         // ... of the replies: none after the hole reach the client
    bool holding = false;              // requests read now are held (tcp_proxy::hold_requests)
    bool was_held = false;             // outlives its client until the held requests reached the server
    bool client_gone = false;          // the client closed its side
    asio::ip::address client_address;  // where the client connects from (tcp_proxy::cut_clients_from)
    std::chrono::milliseconds::rep own_request_delay_ms = 0;  // new_request_delay_ms when accepted
};

struct tcp_proxy_state {
    // First member: destroyed last, after every socket and timer bound to it.
    asio::io_context ioc{1};
    asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
    tcp::acceptor acceptor{ioc};
    tcp::endpoint upstream;  // proxy thread only once it runs (tcp_proxy::set_upstream_port)

    // Written by the test thread, read by the proxy thread.
    std::atomic<tcp_proxy::mode> mode{tcp_proxy::mode::pass};
    std::atomic<std::chrono::milliseconds::rep> request_delay_ms{0};
    std::atomic<std::chrono::milliseconds::rep> reply_delay_ms{0};
    std::atomic<std::chrono::milliseconds::rep> new_request_delay_ms{0};
    std::atomic<std::chrono::milliseconds::rep> jitter_ms{0};
    std::atomic<bool> slice{false};
    std::atomic<std::int64_t> cut_requests_after{-1};
    std::atomic<std::int64_t> cut_replies_after{-1};
    // Written by the proxy thread, read by the test thread.
    std::atomic<std::size_t> accepted{0};
    std::atomic<std::uint64_t> from_clients{0};
    std::atomic<std::uint64_t> from_server{0};

    // Proxy thread only.
    std::set<asio::ip::address> cut_clients;  // tcp_proxy::cut_clients_from
    std::minstd_rand jitter_rng{std::random_device{}()};
    bool stopping = false;
    std::set<std::shared_ptr<tcp_proxy_session>> sessions;
};

}  // namespace detail

namespace {

using detail::tcp_proxy_chunk;
using detail::tcp_proxy_queue;
using detail::tcp_proxy_session;
using detail::tcp_proxy_state;
using session_ptr = std::shared_ptr<tcp_proxy_session>;

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t read_size = 16 * 1024;
constexpr auto accept_retry_delay = std::chrono::milliseconds(10);

enum class direction { request, reply };  // client->server, server->client

// Idempotent. `reset`: SO_LINGER 0, so the peers see a RST rather than a FIN.
void close_session(tcp_proxy_state& st, session_ptr s, bool reset) {
    if (s->closed) return;
    s->closed = true;
    error_code ignored;
    for (tcp::socket* sock : {&s->client, &s->upstream}) {
        if (reset && sock->is_open()) sock->set_option(tcp::socket::linger(true, 0), ignored);
        sock->close(ignored);  // completes its pending reads, writes and connect with operation_aborted
    }
    for (tcp_proxy_queue* q : {&s->to_server, &s->to_client}) {
        q->chunks.clear();
        q->wake.cancel();
    }
    st.sessions.erase(s);
}

void close_all_sessions(tcp_proxy_state& st, bool reset) {
    const auto sessions = st.sessions;  // close_session erases from st.sessions
    for (const auto& s : sessions)
        close_session(st, s, reset);
}

// A session that lost bytes stalls until nothing cuts it any more (see tcp_proxy::set_mode).
void reset_sessions_that_lost_bytes(tcp_proxy_state& st) {
    if (st.mode.load() != tcp_proxy::mode::pass) return;
    const auto sessions = st.sessions;
    for (const auto& s : sessions)
        if (s->lost_bytes && !st.cut_clients.contains(s->client_address)) close_session(st, s, true);
}

// Runs `f` on the proxy thread and returns once it ran.
template <class F>
void on_proxy_thread(tcp_proxy_state& st, F f) {
    if (st.ioc.get_executor().running_in_this_thread()) {
        f();
        return;
    }
    std::promise<void> done;
    auto finished = done.get_future();
    asio::post(st.ioc, [&] {
        try {
            f();
            done.set_value();
        } catch (...) {
            done.set_exception(std::current_exception());
        }
    });
    finished.get();
}

void enqueue(tcp_proxy_queue& q, tcp_proxy_chunk c) {
    const bool was_empty = q.chunks.empty();
    q.chunks.push_back(std::move(c));
    // The writer sleeps until the front chunk is due, which a chunk added behind it cannot
    // change; only an empty queue has it sleeping "forever".
    if (was_empty) q.wake.cancel();
}

// Reads one side and queues what it read for the other side (or discards it, by mode).
asio::awaitable<void> read_side(tcp_proxy_state* st, session_ptr s, direction dir) {
    const bool is_request = dir == direction::request;
    tcp::socket& from = is_request ? s->client : s->upstream;
    tcp_proxy_queue& to = is_request ? s->to_server : s->to_client;
    auto& delay_ms = is_request ? st->request_delay_ms : st->reply_delay_ms;
    auto& counter = is_request ? st->from_clients : st->from_server;
    std::vector<char> buf(read_size);
    for (;;) {
        auto [ec, n] = co_await from.async_read_some(asio::buffer(buf), tuple_awaitable);
        if (s->closed) co_return;
        if (ec && ec != asio::error::eof) {
            close_session(*st, s, false);
            co_return;
        }
        // Mode and delay as they are when the chunk is read: a setter affects later chunks only.
        auto delay = std::max<std::int64_t>(delay_ms.load(), 0);
        if (is_request) delay = std::max<std::int64_t>(delay, s->own_request_delay_ms);
        if (const auto jitter = st->jitter_ms.load(); jitter > 0)
            delay += static_cast<std::int64_t>(st->jitter_rng() % static_cast<std::uint64_t>(jitter + 1));
        auto due = steady::now() + std::chrono::milliseconds(delay);
        const bool held = is_request && s->holding;
        if (held) due = steady::time_point::max();
        if (n > 0) {
            counter.fetch_add(n);
            const auto m = st->mode.load();
            // A direction with a hole forwards nothing more, whatever the mode is now (a
            // partition may follow a drop without a pass between): it stalls until
            // set_mode(pass) resets the session.
            bool& lost = is_request ? s->lost_requests : s->lost_replies;
            const bool discard = lost || m == tcp_proxy::mode::blackhole ||
                                 st->cut_clients.contains(s->client_address) ||
                                 (m == tcp_proxy::mode::drop_replies && !is_request) ||
                                 (m == tcp_proxy::mode::drop_requests && is_request);
            if (discard) {
                lost = true;
                s->lost_bytes = true;
            } else {
                enqueue(to, tcp_proxy_chunk{due, std::string(buf.data(), n), false, held});
            }
        }
        if (ec) {  // EOF: close both sides once what is queued has been written
            if (is_request) s->client_gone = true;
            enqueue(to, tcp_proxy_chunk{due, std::string(), true, held});
            co_return;
        }
    }
}

// The only writer of one side: writes each queued chunk, in order, once it is due.
asio::awaitable<void> write_side(tcp_proxy_state* st, session_ptr s, direction dir) {
    const bool is_request = dir == direction::request;
    tcp::socket& to = is_request ? s->upstream : s->client;
    tcp_proxy_queue& q = is_request ? s->to_server : s->to_client;
    for (;;) {
        if (s->closed) co_return;
        if (q.chunks.empty()) {
            q.wake.expires_at(steady::time_point::max());
            co_await q.wake.async_wait(tuple_awaitable);  // cancelled by enqueue() or close_session()
            continue;
        }
        if (steady::now() < q.chunks.front().due) {
            q.wake.expires_at(q.chunks.front().due);
            co_await q.wake.async_wait(tuple_awaitable);
            continue;  // checks the clock again: never writes early
        }
        tcp_proxy_chunk c = std::move(q.chunks.front());
        q.chunks.pop_front();
        if (c.eof && is_request && s->was_held) {
            // The server runs what was held back before it reads the end of the stream, and
            // closes its side: the reply direction's end closes the session.
            error_code ignored;
            s->upstream.shutdown(tcp::socket::shutdown_send, ignored);
            co_return;
        }
        if (c.eof) {
            close_session(*st, s, false);
            co_return;
        }
        // A held connection's client is gone: its replies have nobody to go to, and a failed
        // write must not close the session before the held requests are through.
        if (!is_request && s->was_held && s->client_gone) continue;
        // A cut: write up to the limit, then reset this connection.
        auto& cut = is_request ? st->cut_requests_after : st->cut_replies_after;
        bool cut_here = false;
        if (auto limit = cut.load(); limit >= 0) {
            if (static_cast<std::int64_t>(c.bytes.size()) >= limit &&
                cut.compare_exchange_strong(limit, -1)) {
                c.bytes.resize(static_cast<std::size_t>(limit));
                cut_here = true;
            } else if (static_cast<std::int64_t>(c.bytes.size()) < limit) {
                cut.fetch_sub(static_cast<std::int64_t>(c.bytes.size()));
            }
        }
        error_code ec;
        if (st->slice.load()) {
            for (std::size_t i = 0; i < c.bytes.size() && !ec; ++i)
                std::tie(ec, std::ignore) =
                    co_await asio::async_write(to, asio::buffer(c.bytes.data() + i, 1), tuple_awaitable);
        } else {
            std::tie(ec, std::ignore) =
                co_await asio::async_write(to, asio::buffer(c.bytes), tuple_awaitable);
        }
        if (ec || cut_here) {
            close_session(*st, s, cut_here);
            co_return;
        }
    }
}

asio::awaitable<void> run_session(tcp_proxy_state* st, session_ptr s) {
    // Reset or shut down before this started: async_connect would open the socket again.
    if (s->closed) co_return;
    auto [ec] = co_await s->upstream.async_connect(st->upstream, tuple_awaitable);
    if (s->closed) co_return;
    if (ec) {  // upstream down: the client sees its connection closed
        close_session(*st, s, false);
        co_return;
    }
    error_code ignored;
    s->client.set_option(tcp::no_delay(true), ignored);
    s->upstream.set_option(tcp::no_delay(true), ignored);
    asio::co_spawn(st->ioc, read_side(st, s, direction::request), asio::detached);
    asio::co_spawn(st->ioc, write_side(st, s, direction::request), asio::detached);
    asio::co_spawn(st->ioc, read_side(st, s, direction::reply), asio::detached);
    asio::co_spawn(st->ioc, write_side(st, s, direction::reply), asio::detached);
}

asio::awaitable<void> accept_loop(tcp_proxy_state* st) {
    for (;;) {
        auto [ec, sock] = co_await st->acceptor.async_accept(tuple_awaitable);
        if (st->stopping || !st->acceptor.is_open()) co_return;
        if (ec) {  // EMFILE and the like: try again shortly
            asio::steady_timer pause(st->ioc, accept_retry_delay);
            co_await pause.async_wait(tuple_awaitable);
            continue;
        }
        st->accepted.fetch_add(1);
        auto s = std::make_shared<tcp_proxy_session>(std::move(sock), st->ioc);
        error_code ignored;
        s->client_address = s->client.remote_endpoint(ignored).address();
        s->own_request_delay_ms = st->new_request_delay_ms.load();
        st->sessions.insert(s);
        asio::co_spawn(st->ioc, run_session(st, s), asio::detached);
    }
}

// Runs on the proxy thread: once the listener and the sessions are closed, every coroutine
// finishes and run() returns.
void shut_down(tcp_proxy_state& st) {
    st.stopping = true;
    error_code ignored;
    st.acceptor.close(ignored);
    close_all_sessions(st, false);
    st.work.reset();
}

void run_proxy_thread(tcp_proxy_state* st) noexcept {
    for (;;) {
        try {
            st->ioc.run();
            return;
        } catch (...) {
            // A handler threw (say bad_alloc): the proxy keeps running.
        }
    }
}

}  // namespace

tcp_proxy::tcp_proxy(std::uint16_t upstream_port) : tcp_proxy("127.0.0.1", upstream_port) {}

tcp_proxy::tcp_proxy(const std::string& host, std::uint16_t upstream_port)
    : state_(std::make_unique<detail::tcp_proxy_state>()), host_(host) {
    auto* st = state_.get();
    error_code ec;
    const auto address = asio::ip::make_address_v4(host, ec);
    if (ec) throw std::invalid_argument("tcp_proxy: '" + host + "' is not an IPv4 address");
    st->upstream = tcp::endpoint(address, upstream_port);
    const tcp::endpoint listen_on(address, 0);
    st->acceptor.open(listen_on.protocol());
    st->acceptor.bind(listen_on);
    st->acceptor.listen();
    port_ = st->acceptor.local_endpoint().port();
    asio::co_spawn(st->ioc, accept_loop(st), asio::detached);
    thread_ = std::thread(&run_proxy_thread, st);
}

tcp_proxy::~tcp_proxy() {
    auto* st = state_.get();
    try {
        asio::post(st->ioc, [st] { shut_down(*st); });
    } catch (...) {
        st->ioc.stop();  // pending coroutines are destroyed with the io_context
    }
    if (thread_.joinable()) {
        try {
            thread_.join();
        } catch (...) {
        }
    }
}

std::string tcp_proxy::uri() const {
    return "redis://" + host_ + ":" + std::to_string(port_);
}

void tcp_proxy::set_upstream_port(std::uint16_t upstream_port) {
    auto* st = state_.get();
    on_proxy_thread(*st, [st, upstream_port] { st->upstream.port(upstream_port); });
}

void tcp_proxy::set_reply_delay(std::chrono::milliseconds d) {
    state_->reply_delay_ms.store(d.count());
}

void tcp_proxy::set_request_delay(std::chrono::milliseconds d) {
    state_->request_delay_ms.store(d.count());
}

void tcp_proxy::set_request_delay_of_new_connections(std::chrono::milliseconds d) {
    state_->new_request_delay_ms.store(d.count());
}

void tcp_proxy::set_mode(mode m) {
    auto* st = state_.get();
    if (m != mode::pass) {
        st->mode.store(m);
        return;
    }
    // One step on the proxy thread: a reply read between `pass` and the reset would reach the
    // client after the hole, which would match it to the wrong request.
    on_proxy_thread(*st, [st] {
        st->mode.store(mode::pass);
        reset_sessions_that_lost_bytes(*st);
    });
}

void tcp_proxy::set_jitter(std::chrono::milliseconds j) {
    state_->jitter_ms.store(j.count());
}

void tcp_proxy::set_slice(bool one_byte_writes) {
    state_->slice.store(one_byte_writes);
}

void tcp_proxy::cut_replies_after(std::int64_t bytes) {
    state_->cut_replies_after.store(bytes < 0 ? -1 : bytes);
}

void tcp_proxy::cut_requests_after(std::int64_t bytes) {
    state_->cut_requests_after.store(bytes < 0 ? -1 : bytes);
}

void tcp_proxy::heal() {
    deliver_held();
    set_mode(mode::pass);
    set_request_delay(std::chrono::milliseconds(0));
    set_reply_delay(std::chrono::milliseconds(0));
    set_request_delay_of_new_connections(std::chrono::milliseconds(0));
    set_jitter(std::chrono::milliseconds(0));
    set_slice(false);
    cut_replies_after(-1);
    cut_requests_after(-1);
}

void tcp_proxy::cut_clients_from(const std::vector<std::string>& hosts) {
    std::set<asio::ip::address> cut;
    for (const auto& h : hosts) {
        error_code ec;
        const auto address = asio::ip::make_address_v4(h, ec);
        if (ec)
            throw std::invalid_argument("tcp_proxy::cut_clients_from: '" + h + "' is not an IPv4 address");
        cut.insert(address);
    }
    auto* st = state_.get();
    // One step on the proxy thread, as set_mode(pass): no chunk is read between the new list
    // and the resets.
    on_proxy_thread(*st, [st, &cut] {
        st->cut_clients = std::move(cut);
        reset_sessions_that_lost_bytes(*st);
    });
}

void tcp_proxy::reset_connections() {
    auto* st = state_.get();
    on_proxy_thread(*st, [st] { close_all_sessions(*st, true); });
}

void tcp_proxy::hold_requests() {
    auto* st = state_.get();
    on_proxy_thread(*st, [st] {
        for (const auto& s : st->sessions) {
            s->holding = true;
            s->was_held = true;
        }
    });
}

void tcp_proxy::deliver_held() {
    auto* st = state_.get();
    on_proxy_thread(*st, [st] {
        const auto now = steady::now();
        for (const auto& s : st->sessions) {
            s->holding = false;
            for (auto& c : s->to_server.chunks)
                if (c.held) c.due = now;
            s->to_server.wake.cancel();
        }
    });
}

std::size_t tcp_proxy::abandoned_connections() const {
    auto* st = state_.get();
    std::size_t n = 0;
    on_proxy_thread(*st, [st, &n] {
        n = static_cast<std::size_t>(
            std::count_if(st->sessions.begin(), st->sessions.end(),
                          [](const auto& s) { return s->was_held && s->client_gone; }));
    });
    return n;
}

std::size_t tcp_proxy::accepted() const {
    return state_->accepted.load();
}

std::uint64_t tcp_proxy::bytes_from_clients() const {
    return state_->from_clients.load();
}

std::uint64_t tcp_proxy::bytes_from_server() const {
    return state_->from_server.load();
}

}  // namespace redlock::test
