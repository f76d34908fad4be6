// SPDX-License-Identifier: BSL-1.0
// The strand a client's connections and lock operations share: which strand make_serial()
// makes, that a strand given is kept, and running_in().
#include "redis/serial_executor.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <future>
#include <memory>

namespace asio = boost::asio;
using redlock::redis::detail::any_strand;
using redlock::redis::detail::io_strand;
using redlock::redis::detail::make_serial;
using redlock::redis::detail::running_in;

// The reason for io_strand: an any_io_executor keeps a target of this size inline, so copying,
// converting and preferring properties of one allocates nothing.
static_assert(sizeof(io_strand) <= sizeof(std::shared_ptr<void>) + sizeof(void*));

BOOST_AUTO_TEST_SUITE(serial_executor)

BOOST_AUTO_TEST_CASE(over_an_io_context_it_is_a_strand_of_the_io_contexts_own_executor) {
    asio::io_context ioc;
    const auto serial = make_serial(ioc.get_executor());
    BOOST_TEST(serial.target<io_strand>() != nullptr);
    BOOST_TEST(!running_in(serial));
    bool inside = false;
    asio::post(serial, [&] { inside = running_in(serial); });
    ioc.run();
    BOOST_TEST(inside);
}

BOOST_AUTO_TEST_CASE(a_strand_given_is_kept_not_wrapped_in_another) {
    asio::io_context ioc;
    const auto first = make_serial(ioc.get_executor());
    const auto again = make_serial(first);
    BOOST_TEST((again == first));
    const asio::any_io_executor callers = asio::make_strand(asio::any_io_executor(ioc.get_executor()));
    BOOST_TEST((make_serial(callers) == callers));
    // One strand: what runs on one runs in the other.
    bool inside = false;
    asio::post(first, [&] { inside = running_in(again); });
    ioc.run();
    BOOST_TEST(inside);
}

BOOST_AUTO_TEST_CASE(over_another_executor_it_is_a_strand_of_that_executor) {
    asio::thread_pool pool(2);
    const auto serial = make_serial(pool.get_executor());
    BOOST_TEST(serial.target<any_strand>() != nullptr);
    BOOST_TEST(!running_in(serial));
    // Serialised on the pool's two threads: no two handlers at once.
    std::atomic<int> running{0};
    std::atomic<bool> overlapped{false};
    std::atomic<int> done{0};
    std::promise<void> all;
    constexpr int handlers = 200;
    for (int i = 0; i < handlers; ++i) {
        asio::post(serial, [&] {
            if (running.fetch_add(1) != 0 || !running_in(serial)) overlapped = true;
            running.fetch_sub(1);
            if (done.fetch_add(1) + 1 == handlers) all.set_value();
        });
    }
    all.get_future().wait();
    BOOST_TEST(!overlapped);
    pool.join();
}

BOOST_AUTO_TEST_CASE(an_executor_that_is_not_a_strand_is_never_running_in) {
    asio::io_context ioc;
    const asio::any_io_executor plain = ioc.get_executor();
    bool inside = true;
    asio::post(plain, [&] { inside = running_in(plain); });
    ioc.run();
    BOOST_TEST(!inside);
}

BOOST_AUTO_TEST_SUITE_END()
