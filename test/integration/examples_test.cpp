// SPDX-License-Identifier: BSL-1.0
// Smoke tests of the examples (examples/), each run as its own process against real servers:
// exit status 0 and the output that shows the example did what it says.
#include "support/child_process.hpp"
#include "support/lock_helpers.hpp"
#include "support/redis_server.hpp"
#include "support/scratch_dir.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::test::read_file;
using redlock::test::redis_server;
using redlock::test::scratch_dir;
using redlock::test::server_list;
using redlock::test::spawn_shell;
using redlock::test::start_redis_servers;
using redlock::test::wait_child;
using redlock::test::write_config_file;

namespace {

const std::string examples_dir = REDLOCK_EXAMPLES_DIR;

pid_t start_example(const std::string& name, const std::string& args, const std::string& out) {
    return spawn_shell(examples_dir + "/" + name + " " + args, out);
}

// Runs an example to its end; its output goes to `out`.
int run_example(const std::string& name, const std::string& args, const std::string& out) {
    return wait_child(start_example(name, args, out), 60s);
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Books seats 1..seats on each of the servers' ports from `clients` connections spread over
// them; returns the number of "OK" replies per seat.
std::map<int, int> book_everything(const std::vector<unsigned short>& ports, int clients, int seats) {
    asio::io_context ioc;
    std::map<int, int> ok;
    int errors = 0;
    for (int c = 0; c < clients; ++c) {
        asio::co_spawn(
            ioc,
            [&, c]() -> asio::awaitable<void> {
                asio::ip::tcp::socket socket(co_await asio::this_coro::executor);
                const asio::ip::tcp::endpoint to(asio::ip::make_address("127.0.0.1"),
                                                 ports[static_cast<std::size_t>(c) % ports.size()]);
                co_await socket.async_connect(to, asio::use_awaitable);
                std::string buffer;
                for (int seat = 1; seat <= seats; ++seat) {
                    const auto request =
                        "BOOK " + std::to_string(seat) + " customer" + std::to_string(c) + "\n";
                    co_await asio::async_write(socket, asio::buffer(request), asio::use_awaitable);
                    auto n = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer), '\n',
                                                             asio::use_awaitable);
                    const auto reply = buffer.substr(0, n);
                    buffer.erase(0, n);
                    if (reply == "OK\n") {
                        ++ok[seat];
                    } else if (!reply.starts_with("TAKEN ")) {
                        ++errors;
                        BOOST_TEST_MESSAGE("seat " << seat << ": " << reply);
                    }
                }
            },
            [&](std::exception_ptr ep) {
                if (ep) ++errors;
            });
    }
    ioc.run_for(60s);
    BOOST_TEST(errors == 0);
    return ok;
}

// Starts `count` seat_booking processes; returns their PIDs and fills `ports` from their output.
std::vector<pid_t> start_booking_services(const scratch_dir& dir, const std::string& config, int count,
                                          const std::string& extra, std::vector<unsigned short>& ports) {
    std::vector<pid_t> pids;
    ports.clear();
    for (int i = 0; i < count; ++i) {
        const auto out = dir.file("booking" + std::to_string(i) + extra);
        pids.push_back(start_example("seat_booking", config + " " + extra, out));
        unsigned port = 0;
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (port == 0 && std::chrono::steady_clock::now() < deadline) {
            std::sscanf(read_file(out).c_str(), "listening on 127.0.0.1:%u", &port);
            std::this_thread::sleep_for(20ms);
        }
        BOOST_TEST_REQUIRE(port != 0u, read_file(out));
        ports.push_back(static_cast<unsigned short>(port));
    }
    return pids;
}

// One HTTP GET on 127.0.0.1:port, read to the server's close; "" if it could not connect.
std::string http_get(unsigned short port, const std::string& path) {
    asio::io_context ioc;
    asio::ip::tcp::socket socket(ioc);
    boost::system::error_code ec;
    socket.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
    if (ec) return "";
    const auto request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    asio::write(socket, asio::buffer(request), ec);
    std::string response;
    asio::read(socket, asio::dynamic_buffer(response), ec);  // to EOF: the server closes
    return response;
}

// The value of the sample `line_start` (a name with its labels) in a Prometheus text; -1 if absent.
double sample_value(const std::string& text, const std::string& line_start) {
    const auto at = ("\n" + text).find("\n" + line_start + " ");
    if (at == std::string::npos) return -1;
    return std::atof(text.c_str() + at + line_start.size() + 1);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(examples_test)

BOOST_AUTO_TEST_CASE(the_short_examples_run_and_show_what_they_say) {
    auto servers = start_redis_servers(3);
    scratch_dir dir;
    const auto three = write_config_file(dir, servers, "three");
    const auto out = dir.file("out");

    std::ofstream(dir.file("one.json"))
        << "{\"nodes\": [\"" << servers[0]->uri() << "\"], \"restart_quarantine\": false}";
    BOOST_TEST(run_example("try_lock", dir.file("one.json"), out) == 0, read_file(out));
    BOOST_TEST(contains(read_file(out), "bob tries: the resource is held by another owner"), read_file(out));
    BOOST_TEST(contains(read_file(out), "bob tries again: holds it"));

    BOOST_TEST(run_example("redlock_quorum", three, out) == 0, read_file(out));
    BOOST_TEST(contains(read_file(out), "second client: not_acquired ["), read_file(out));

    BOOST_TEST(run_example("fenced_store", three, out) == 0, read_file(out));
    BOOST_TEST(contains(read_file(out), "the write was refused"), read_file(out));
    BOOST_TEST(servers[0]->command({"GET", "example:account:balance"}).str == "100 (fast)");

    BOOST_TEST(run_example("callbacks_and_futures", three, out) == 0, read_file(out));
    BOOST_TEST(contains(read_file(out), "callback: released (ok)"), read_file(out));
    BOOST_TEST(contains(read_file(out), "future: released"), read_file(out));

    BOOST_TEST(run_example("scoped_lock", three, out) == 0, read_file(out));
    BOOST_TEST(contains(read_file(out), "held example:scoped for 5 s on a 2 s lease"), read_file(out));
    BOOST_TEST(contains(read_file(out), "client closed"), read_file(out));

    BOOST_TEST(run_example("connection_demo", "--uri " + servers[1]->uri() + " --coroutines 100 --seconds 1",
                           out) == 0,
               read_file(out));
    BOOST_TEST(run_example("lock_demo",
                           "--nodes " + redlock::test::node_uris(servers) +
                               " --restart-quarantine off --workers 2 --seconds 1",
                           out) == 0,
               read_file(out));
    BOOST_TEST(contains(read_file(out), "granted"), read_file(out));
    // The closing table: a header and a line per node, each voting, none in JSON.
    BOOST_TEST(contains(read_file(out), "node                         votes"), read_file(out));
    for (const auto& s : servers) {
        auto line = s->uri();  // the table's node column is 28 wide
        line.resize(std::max<std::size_t>(line.size(), 28), ' ');
        BOOST_TEST(contains(read_file(out), line + " yes"), read_file(out));
    }
    BOOST_TEST(!contains(read_file(out), "metrics {"), read_file(out));
    BOOST_TEST(run_example("lock_demo",
                           "--nodes " + redlock::test::node_uris(servers) +
                               " --restart-quarantine off --workers 1 --seconds 1 --json on",
                           out) == 0,
               read_file(out));
    BOOST_TEST(contains(read_file(out), "metrics {"), read_file(out));
    for (const auto& s : servers)
        BOOST_TEST(s->command({"KEYS", "{redlock:*}:lock"}).elements.empty());
    // A value it does not know is refused, not taken for the default.
    for (const auto* bad :
         {" --restart-quarantine of", " --json yes", " --workers 2x", " --seconds 0", " --colour on"}) {
        BOOST_TEST(run_example("lock_demo", "--nodes " + redlock::test::node_uris(servers) + bad, out) == 2);
        BOOST_TEST(contains(read_file(out), std::string("lock_demo: bad flag or value:") + bad),
                   read_file(out));
    }
}

// 3 processes of 2 s each, terms of 300 ms: the job log shows one leader per term (one name per
// fence), terms that never interleave, and fences that grow from term to term.
BOOST_AUTO_TEST_CASE(leader_election_has_one_leader_per_term) {
    auto servers = start_redis_servers(3);
    scratch_dir dir;
    const auto config = write_config_file(dir, servers, "three");
    std::vector<pid_t> pids;
    for (const char* name : {"A", "B", "C"}) {
        pids.push_back(start_example("leader_election",
                                     config + " --name " + name + " --seconds 2 --term-ms 300",
                                     dir.file(std::string("le") + name)));
    }
    for (std::size_t i = 0; i < pids.size(); ++i)
        BOOST_TEST(wait_child(pids[i], 30s) == 0, read_file(dir.file(std::string("le") + "ABC"[i])));
    const auto log = servers[0]->command({"LRANGE", "example:leader:log", "0", "-1"});
    BOOST_TEST_REQUIRE(log.elements.size() >= 6u);
    std::set<unsigned long long> finished_terms;
    std::set<std::string> leaders;
    std::string current_name;
    unsigned long long current_fence = 0;
    for (const auto& entry : log.elements) {
        std::istringstream in(entry.str);
        std::string name;
        unsigned long long fence = 0;
        in >> name >> fence;
        if (fence != current_fence) {
            BOOST_TEST(fence > current_fence, entry.str);  // a new term: a larger fence
            BOOST_TEST(!finished_terms.count(fence), entry.str);
            finished_terms.insert(current_fence);
            current_fence = fence;
            current_name = name;
            leaders.insert(name);
        }
        BOOST_TEST(name == current_name, entry.str);  // one leader per term
    }
    BOOST_TEST(finished_terms.size() >= 3u);
    BOOST_TEST_MESSAGE(finished_terms.size() << " terms, " << leaders.size() << " distinct leaders");
}

// 3 processes of 5 jobs each through a semaphore of 2 permits on one master (over N > 1 masters
// the bound is floor(K * N / quorum), docs/safety.md): every job ran, and no job saw more than 2
// running at once.
BOOST_AUTO_TEST_CASE(job_limit_never_runs_more_jobs_than_permits) {
    auto servers = start_redis_servers(1);
    scratch_dir dir;
    const auto config = write_config_file(dir, servers, "one");
    std::vector<pid_t> pids;
    for (const char* name : {"A", "B", "C"}) {
        pids.push_back(start_example("job_limit", config + " --name " + name + " --jobs 5 --permits 2",
                                     dir.file(std::string("jobs") + name)));
    }
    for (std::size_t i = 0; i < pids.size(); ++i)
        BOOST_TEST(wait_child(pids[i], 60s) == 0, read_file(dir.file(std::string("jobs") + "ABC"[i])));
    const auto log = servers[0]->command({"LRANGE", "example:jobs:log", "0", "-1"});
    BOOST_TEST(log.elements.size() == 15u);
    for (const auto& entry : log.elements) {
        const auto running = std::stoi(entry.str);
        BOOST_TEST(running >= 1);
        BOOST_TEST(running <= 2, entry.str);
    }
    BOOST_TEST(servers[0]->command({"GET", "example:jobs:running"}).str == "0");
    for (const auto& s : servers)
        BOOST_TEST(s->command({"KEYS", "{redlock:*}:lock"}).elements.empty());
}

// 2 processes, each with 4 readers looping without a pause and a writer of 3 versions, on a
// cache of two keys that a writer sets one after the other, over 3 masters: every write went
// through, and no read saw a half-written version. The same processes without the lock do (the
// control).
BOOST_AUTO_TEST_CASE(read_mostly_cache_never_shows_a_half_written_version) {
    auto servers = start_redis_servers(3);
    scratch_dir dir;
    const auto config = write_config_file(dir, servers, "three");
    for (const std::string mode : {"", " --no-lock"}) {
        std::vector<pid_t> pids;
        for (const char* name : {"A", "B"})
            pids.push_back(start_example("read_mostly_cache", config + " --name " + name + mode,
                                         dir.file(std::string("cache") + name)));
        std::vector<int> status;
        for (std::size_t i = 0; i < pids.size(); ++i)
            status.push_back(wait_child(pids[i], 120s));
        const auto out_a = read_file(dir.file("cacheA"));
        const auto out_b = read_file(dir.file("cacheB"));
        if (mode.empty()) {
            BOOST_TEST(status[0] == 0, out_a);
            BOOST_TEST(status[1] == 0, out_b);
            BOOST_TEST(out_a.find("3 writes, 0 torn") != std::string::npos, out_a);
            BOOST_TEST(out_b.find("3 writes, 0 torn") != std::string::npos, out_b);
            for (const auto& s : servers) {
                BOOST_TEST(s->command({"KEYS", "{redlock:*}:lock"}).elements.empty());
                BOOST_TEST(s->command({"KEYS", "{redlock:*}:rw"}).elements.empty());
            }
        } else {
            // Without it, readers meet the writers' half-written versions.
            BOOST_TEST(status[0] + status[1] >= 1, out_a << out_b);
        }
    }
}

// 3 service processes, 30 customers booking the same 10 seats through all of them: every seat
// is booked exactly once. The same services without the lock double-book (the control).
BOOST_AUTO_TEST_CASE(seat_booking_never_double_books_across_processes) {
    auto servers = start_redis_servers(3);
    scratch_dir dir;
    const auto config = write_config_file(dir, servers, "three");
    for (const std::string mode : {"", "--no-lock"}) {
        servers[0]->command({"FLUSHALL"});
        std::vector<unsigned short> ports;
        auto pids = start_booking_services(dir, config, 3, mode, ports);
        const auto ok = book_everything(ports, 30, 10);
        int double_booked = 0;
        for (int seat = 1; seat <= 10; ++seat) {
            const int n = ok.count(seat) ? ok.at(seat) : 0;
            if (mode.empty()) BOOST_TEST(n == 1, "seat " << seat << " booked " << n << " times");
            double_booked += n > 1 ? 1 : 0;
        }
        if (!mode.empty()) BOOST_TEST(double_booked > 0, "without the lock nothing was double-booked");
        for (auto pid : pids) {
            ::kill(pid, SIGTERM);
            BOOST_TEST(wait_child(pid, 10s) == 0);
        }
    }
}

// The metrics server's /metrics, fetched as Prometheus would while its workers contend: the
// counters and the three histograms move; other paths are 404; SIGTERM closes it cleanly.
BOOST_AUTO_TEST_CASE(metrics_server_serves_what_its_client_counts) {
    auto servers = start_redis_servers(3);
    scratch_dir dir;
    const auto config = write_config_file(dir, servers, "three");
    const auto out = dir.file("metrics_server");
    const auto pid = start_example("metrics_server", config + " --workers 3 --hold-ms 10", out);
    unsigned port = 0;
    for (auto deadline = std::chrono::steady_clock::now() + 10s;
         port == 0 && std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(20ms))
        std::sscanf(read_file(out).c_str(), "serving http://127.0.0.1:%u/metrics", &port);
    BOOST_TEST_REQUIRE(port != 0u, read_file(out));
    const auto at = static_cast<unsigned short>(port);

    // Scrape until three workers on one lock have both held it and waited for it (a loaded
    // machine may take a while; the bound is for a server that never gets there).
    std::string scrape;
    for (auto deadline = std::chrono::steady_clock::now() + 60s; std::chrono::steady_clock::now() < deadline;
         std::this_thread::sleep_for(100ms)) {
        scrape = http_get(at, "/metrics");
        if (sample_value(scrape, "redlock_hold_time_seconds_count") >= 5 &&
            sample_value(scrape, "redlock_wait_time_seconds_count") >= 1)
            break;
    }
    BOOST_TEST(scrape.starts_with("HTTP/1.1 200 OK\r\n"), scrape);
    BOOST_TEST(contains(scrape, "Content-Type: text/plain; version=0.0.4"), scrape);
    BOOST_TEST(contains(scrape, "# TYPE redlock_acquired_total counter"), scrape);
    BOOST_TEST(sample_value(scrape, "redlock_acquired_total") >= 5, scrape);
    BOOST_TEST(sample_value(scrape, "redlock_hold_time_seconds_count") >= 5, scrape);
    BOOST_TEST(sample_value(scrape, "redlock_wait_time_seconds_count") >= 1, scrape);
    BOOST_TEST(sample_value(scrape, "redlock_hold_time_seconds_sum") > 0, scrape);
    BOOST_TEST(sample_value(scrape, "redlock_acquire_latency_seconds_bucket{le=\"+Inf\"}") ==
                   sample_value(scrape, "redlock_acquire_latency_seconds_count"),
               scrape);
    for (const auto& s : servers)
        BOOST_TEST(sample_value(scrape, "redlock_node_voting{node=\"" + s->uri() + "\"}") == 1, scrape);

    BOOST_TEST(http_get(at, "/").starts_with("HTTP/1.1 404 Not Found\r\n"));
    ::kill(pid, SIGTERM);
    BOOST_TEST(wait_child(pid, 30s) == 0, read_file(out));
    BOOST_TEST(contains(read_file(out), "closed: "), read_file(out));
    for (const auto& s : servers)
        BOOST_TEST(s->command({"KEYS", "{redlock:*}:lock"}).elements.empty());
}

BOOST_AUTO_TEST_SUITE_END()
