// SPDX-License-Identifier: BSL-1.0
// Redlock over independent masters (3 or more): the acquire goes to every node at once and
// holds once a majority granted. Prints what each node answered and the validity left; a
// second client is then refused by a majority (a node the first client's request had not
// reached yet may still grant it, and counts for nothing); after the release it gets the lock.
//
//   redlock_quorum URI,URI,URI[,...] | config.json
#include "example_support.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

// One letter per node: G granted, D denied, X failed, . no answer before the decision.
std::string verdicts(const redlock::diagnostics& d) {
    std::string s;
    for (const auto& n : d.nodes) {
        using v = redlock::node_outcome::verdict;
        s += n.result == v::granted ? 'G' : n.result == v::denied ? 'D' : n.result == v::failed ? 'X' : '.';
    }
    return s;
}

asio::awaitable<int> show(redlock::client& first, redlock::client& second) {
    redlock::lock_options o;
    o.ttl = 5s;
    redlock::diagnostics diag;
    auto held = co_await first.async_acquire("example:quorum", o, diag, asio::use_awaitable);
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(held.remaining());
    std::printf("first client: granted by %u of %zu nodes [%s], validity left %lld ms\n",
                held.nodes_granted(), first.node_count(), verdicts(diag).c_str(),
                static_cast<long long>(left.count()));

    redlock::diagnostics refused;
    auto [ec, none] =
        co_await second.async_acquire("example:quorum", o, refused, asio::as_tuple(asio::use_awaitable));
    std::printf("second client: %s [%s]\n",
                ec ? redlock::error_name(static_cast<redlock::error>(ec.value())) : "granted?!",
                verdicts(refused).c_str());

    co_await held.async_release(asio::use_awaitable);
    redlock::diagnostics after;
    auto next = co_await second.async_acquire("example:quorum", o, after, asio::use_awaitable);
    std::printf("after the release, second client: granted [%s]\n", verdicts(after).c_str());
    co_await next.async_release(asio::use_awaitable);
    co_return ec == redlock::error::not_acquired ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: redlock_quorum URI,URI,URI[,...] | config.json\n");
        return 2;
    }
    const auto cfg = example_config("redlock_quorum", argv[1]);
    asio::io_context ioc;
    redlock::client first(ioc.get_executor(), cfg);
    redlock::client second(ioc.get_executor(), cfg);
    return run_example(ioc, "redlock_quorum", show(first, second));
}
