// SPDX-License-Identifier: BSL-1.0
// The sans-I/O request/reply matcher, driven step by step without sockets.
#include "redis/multiplexer.hpp"

#include "support/printing.hpp"
#include "support/resp_values.hpp"
#include <redlock/error.hpp>
#include <redlock/resp/request.hpp>

#include <boost/asio/error.hpp>
#include <boost/test/unit_test.hpp>

#include <functional>

using redlock::redis::exec_entry;
using redlock::redis::multiplexer;
namespace resp = redlock::resp;

using redlock::test::error_reply;
using redlock::test::integer_reply;

namespace {

struct recording_entry : exec_entry {
    recording_entry(std::string payload, std::size_t n) : exec_entry(std::move(payload), n) {}
    recording_entry(std::string payload, std::size_t confirmations, std::string push_kind)
        : exec_entry(std::move(payload), confirmations, std::move(push_kind)) {}
    void on_complete(boost::system::error_code ec) override {
        ++completions;
        result = ec;
        got = replies();
        if (then) then();
    }
    int completions = 0;
    boost::system::error_code result;
    std::vector<resp::value> got;
    std::function<void()> then;
};

std::shared_ptr<recording_entry> entry(std::string payload, std::size_t n = 1) {
    return std::make_shared<recording_entry>(std::move(payload), n);
}

// A SUBSCRIBE (or UNSUBSCRIBE) of `channels` channels.
std::shared_ptr<recording_entry> subscription(std::string payload, std::size_t channels,
                                              std::string kind = "subscribe") {
    return std::make_shared<recording_entry>(std::move(payload), channels, std::move(kind));
}

resp::value push(std::string kind, std::string channel) {
    resp::value v;
    v.kind = resp::type::push;
    v.elements.resize(3);
    v.elements[0].kind = resp::type::bulk_string;
    v.elements[0].str = std::move(kind);
    v.elements[1].kind = resp::type::bulk_string;
    v.elements[1].str = std::move(channel);
    v.elements[2].kind = resp::type::integer;
    return v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(multiplexer_suite)

BOOST_AUTO_TEST_CASE(requests_arriving_during_a_write_leave_together_in_the_next_one) {
    multiplexer m;
    auto a = entry("A");
    m.add(a);
    BOOST_TEST(m.prepare_write() == "A");
    BOOST_TEST(!m.has_staged());
    auto b = entry("B");
    auto c = entry("C");
    m.add(b);
    m.add(c);
    BOOST_TEST(m.staged() == 2u);
    BOOST_TEST(m.prepare_write() == "BC");
    BOOST_TEST(m.awaiting() == 3u);
}

BOOST_AUTO_TEST_CASE(replies_are_matched_in_fifo_order) {
    multiplexer m;
    auto a = entry("A"), b = entry("B", 2), c = entry("C");
    m.add(a);
    m.add(b);
    m.add(c);
    m.prepare_write();
    for (int i = 1; i <= 4; ++i)
        BOOST_TEST((m.on_reply(integer_reply(i)) == multiplexer::reply_outcome::matched));
    BOOST_TEST(a->completions == 1);
    BOOST_TEST(b->completions == 1);
    BOOST_TEST(c->completions == 1);
    BOOST_TEST(a->got.at(0).integer == 1);
    BOOST_TEST(b->got.size() == 2u);
    BOOST_TEST(b->got.at(0).integer == 2);
    BOOST_TEST(b->got.at(1).integer == 3);
    BOOST_TEST(c->got.at(0).integer == 4);
    BOOST_TEST(!m.awaiting_replies());
}

BOOST_AUTO_TEST_CASE(a_reply_may_arrive_before_the_write_completes) {
    multiplexer m;
    auto a = entry("A");
    m.add(a);
    m.prepare_write();  // the write is still in flight when the reply comes
    m.on_reply(integer_reply(7));
    BOOST_TEST(a->completions == 1);
    BOOST_TEST(!a->result);
}

BOOST_AUTO_TEST_CASE(cancelled_staged_request_is_never_written) {
    multiplexer m;
    auto a = entry("A"), b = entry("B");
    m.add(a);
    m.add(b);
    BOOST_TEST(m.cancel(a, boost::asio::error::operation_aborted));
    BOOST_TEST(a->completions == 1);
    BOOST_TEST(a->result == boost::asio::error::operation_aborted);
    BOOST_TEST(m.prepare_write() == "B");
    m.on_reply(integer_reply(1));
    BOOST_TEST(b->got.at(0).integer == 1);
    BOOST_TEST(!m.cancel(a, boost::asio::error::operation_aborted));  // already finished
    BOOST_TEST(a->completions == 1);
}

BOOST_AUTO_TEST_CASE(cancelled_written_request_has_its_reply_consumed_not_handed_on) {
    multiplexer m;
    auto a = entry("A", 2), b = entry("B");
    m.add(a);
    m.add(b);
    m.prepare_write();
    BOOST_TEST(m.cancel(a, redlock::error::request_timeout));
    BOOST_TEST(a->completions == 1);
    BOOST_TEST(a->result == redlock::error::request_timeout);
    m.on_reply(integer_reply(1));  // a's replies: dropped
    m.on_reply(integer_reply(2));
    BOOST_TEST(b->completions == 0);
    m.on_reply(integer_reply(3));  // b's reply
    BOOST_TEST(b->completions == 1);
    BOOST_TEST(b->got.at(0).integer == 3);
    BOOST_TEST(a->completions == 1);
    BOOST_TEST(!m.cancel(a, redlock::error::request_timeout));
}

BOOST_AUTO_TEST_CASE(connection_lost_fails_written_requests_and_keeps_unwritten_ones) {
    multiplexer m;
    auto a = entry("A"), b = entry("B"), c = entry("C");
    m.add(a);
    m.add(b);
    m.prepare_write();
    m.add(c);
    m.on_connection_lost(redlock::error::reply_lost);
    BOOST_TEST(a->result == redlock::error::reply_lost);
    BOOST_TEST(b->result == redlock::error::reply_lost);
    BOOST_TEST(c->completions == 0);
    BOOST_TEST(m.prepare_write() == "C");  // retried on the next connection
    m.on_reply(integer_reply(9));
    BOOST_TEST(c->got.at(0).integer == 9);
}

BOOST_AUTO_TEST_CASE(abandoned_requests_do_not_fail_twice_when_the_connection_drops) {
    multiplexer m;
    auto a = entry("A");
    m.add(a);
    m.prepare_write();
    m.cancel(a, boost::asio::error::operation_aborted);
    m.on_connection_lost(redlock::error::reply_lost);
    BOOST_TEST(a->completions == 1);
    BOOST_TEST(a->result == boost::asio::error::operation_aborted);
    BOOST_TEST(!m.awaiting_replies());
}

BOOST_AUTO_TEST_CASE(pushes_and_unsolicited_replies_are_reported) {
    multiplexer m;
    resp::value push;
    push.kind = resp::type::push;
    BOOST_TEST((m.on_reply(std::move(push)) == multiplexer::reply_outcome::push));
    BOOST_TEST((m.on_reply(integer_reply(1)) == multiplexer::reply_outcome::unexpected));
    auto a = entry("A");
    m.add(a);
    // Staged, not written: a reply now is still unexpected.
    BOOST_TEST((m.on_reply(integer_reply(1)) == multiplexer::reply_outcome::unexpected));
    BOOST_TEST(a->completions == 0);
}

BOOST_AUTO_TEST_CASE(a_completion_that_adds_a_request_does_not_corrupt_the_queue) {
    multiplexer m;
    auto a = entry("A"), b = entry("B");
    auto follow_up = entry("F");
    a->then = [&] { m.add(follow_up); };
    m.add(a);
    m.add(b);
    m.prepare_write();
    m.on_reply(integer_reply(1));
    BOOST_TEST(a->completions == 1);
    BOOST_TEST(m.prepare_write() == "F");
    m.on_reply(integer_reply(2));
    m.on_reply(integer_reply(3));
    BOOST_TEST(b->got.at(0).integer == 2);
    BOOST_TEST(follow_up->got.at(0).integer == 3);
}

BOOST_AUTO_TEST_CASE(completions_on_connection_loss_may_add_requests) {
    multiplexer m;
    auto a = entry("A");
    auto retry = entry("R");
    a->then = [&] { m.add(retry); };
    m.add(a);
    m.prepare_write();
    m.on_connection_lost(redlock::error::reply_lost);
    BOOST_TEST(m.prepare_write() == "R");
}

BOOST_AUTO_TEST_CASE(fail_all_completes_everything_once) {
    multiplexer m;
    auto a = entry("A"), b = entry("B"), c = entry("C");
    m.add(a);
    m.add(b);
    m.prepare_write();
    m.add(c);
    m.cancel(b, boost::asio::error::operation_aborted);
    m.fail_all(redlock::error::connection_closed);
    BOOST_TEST(a->result == redlock::error::connection_closed);
    BOOST_TEST(b->result == boost::asio::error::operation_aborted);
    BOOST_TEST(c->result == redlock::error::connection_closed);
    BOOST_TEST(a->completions + b->completions + c->completions == 3);
    BOOST_TEST(m.queued() == 0u);
}

BOOST_AUTO_TEST_CASE(drop_all_forgets_everything_without_completing_it) {
    multiplexer m;
    auto a = entry("A"), b = entry("B");
    m.add(a);
    m.prepare_write();
    m.add(b);
    m.drop_all();
    BOOST_TEST(a->completions + b->completions == 0);
    BOOST_TEST(m.queued() == 0u);
    BOOST_TEST(!m.awaiting_replies());
    BOOST_TEST(!m.has_staged());
    BOOST_TEST(a.use_count() == 1);  // the multiplexer let go of them
    BOOST_TEST(b.use_count() == 1);
}

BOOST_AUTO_TEST_CASE(ten_thousand_interleaved_requests_keep_their_order) {
    multiplexer m;
    std::vector<std::shared_ptr<recording_entry>> entries;
    std::int64_t next_reply = 0;
    for (int round = 0; round < 100; ++round) {
        for (int i = 0; i < 100; ++i) {
            entries.push_back(entry("x"));
            m.add(entries.back());
        }
        m.prepare_write();
        // Answer only half of what is outstanding before the next batch is written.
        for (int i = 0; i < 50; ++i)
            m.on_reply(integer_reply(next_reply++));
    }
    while (m.awaiting_replies())
        m.on_reply(integer_reply(next_reply++));
    for (std::size_t i = 0; i < entries.size(); ++i) {
        BOOST_TEST_REQUIRE(entries[i]->completions == 1);
        BOOST_TEST_REQUIRE(entries[i]->got.at(0).integer == static_cast<std::int64_t>(i));
    }
}

BOOST_AUTO_TEST_CASE(expire_times_out_overdue_entries_only_and_names_the_next_deadline) {
    using namespace std::chrono_literals;
    multiplexer m;
    const exec_entry::time_point t0{};
    auto written_overdue = entry("A"), written_later = entry("B"), staged_overdue = entry("C"),
         no_deadline = entry("D");
    written_overdue->set_deadline(t0 + 10ms);
    written_later->set_deadline(t0 + 30ms);
    staged_overdue->set_deadline(t0 + 5ms);
    m.add(written_overdue);
    m.add(written_later);
    m.prepare_write();
    m.add(staged_overdue);
    m.add(no_deadline);

    BOOST_TEST((m.expire(t0 + 4ms, redlock::error::request_timeout) == t0 + 5ms));
    BOOST_TEST(written_overdue->completions + written_later->completions + staged_overdue->completions == 0);

    BOOST_TEST((m.expire(t0 + 10ms, redlock::error::request_timeout) == t0 + 30ms));
    BOOST_TEST(written_overdue->completions == 1);
    BOOST_TEST(written_overdue->result == redlock::error::request_timeout);
    BOOST_TEST(staged_overdue->completions == 1);
    BOOST_TEST(written_later->completions == 0);
    BOOST_TEST(no_deadline->completions == 0);

    // The timed-out staged entry is never written; the written one's reply is still consumed.
    BOOST_TEST(m.prepare_write() == "D");
    m.on_reply(integer_reply(1));  // A's, dropped
    m.on_reply(integer_reply(2));  // B's
    BOOST_TEST(written_later->got.at(0).integer == 2);
    BOOST_TEST(written_overdue->completions == 1);
    BOOST_TEST((m.expire(t0 + 1h, redlock::error::request_timeout) == exec_entry::time_point::max()));
    BOOST_TEST(no_deadline->completions == 0);
}

BOOST_AUTO_TEST_CASE(a_timeout_completion_that_adds_a_request_is_safe) {
    using namespace std::chrono_literals;
    multiplexer m;
    const exec_entry::time_point t0{};
    std::vector<std::shared_ptr<recording_entry>> added;
    auto a = entry("A");
    a->set_deadline(t0 + 1ms);
    a->then = [&] {
        for (int i = 0; i < 100; ++i) {
            added.push_back(entry("x"));
            added.back()->set_deadline(t0 + 50ms);
            m.add(added.back());
        }
    };
    m.add(a);
    m.prepare_write();
    // The requests added by the completion are not in this expire's answer: their adder arms its own timer.
    BOOST_TEST((m.expire(t0 + 2ms, redlock::error::request_timeout) == exec_entry::time_point::max()));
    BOOST_TEST(a->completions == 1);
    BOOST_TEST(m.staged() == 100u);
    BOOST_TEST((m.expire(t0 + 2ms, redlock::error::request_timeout) == t0 + 50ms));
}

BOOST_AUTO_TEST_CASE(a_subscription_is_answered_by_its_pushes_and_keeps_the_replies_in_step) {
    multiplexer m;
    auto a = entry("A"), sub = subscription("SUB", 2), b = entry("B");
    m.add(a);
    m.add(sub);
    m.add(b);
    BOOST_TEST(m.prepare_write() == "ASUBB");
    BOOST_TEST(m.awaiting() == 3u);
    BOOST_TEST((m.on_reply(integer_reply(1)) == multiplexer::reply_outcome::matched));
    // A message is routed, and confirms nothing; the confirmations are routed too.
    BOOST_TEST((m.on_reply(push("message", "x")) == multiplexer::reply_outcome::push));
    BOOST_TEST((m.on_reply(push("subscribe", "c1")) == multiplexer::reply_outcome::push));
    BOOST_TEST(sub->completions == 0);
    BOOST_TEST((m.on_reply(push("subscribe", "c2")) == multiplexer::reply_outcome::push));
    BOOST_TEST(sub->completions == 1);
    BOOST_TEST(!sub->result);
    BOOST_TEST(sub->got.empty());
    BOOST_TEST((m.on_reply(integer_reply(2)) == multiplexer::reply_outcome::matched));
    BOOST_TEST(a->got.at(0).integer == 1);
    BOOST_TEST(b->got.at(0).integer == 2);
    BOOST_TEST(!m.awaiting_replies());
}

// An ACL without +subscribe answers SUBSCRIBE with -NOPERM: that error is the SUBSCRIBE's. Given
// to the next request, every later request would get the reply of the one before it.
BOOST_AUTO_TEST_CASE(an_error_refusing_a_subscription_is_its_own_not_the_next_requests) {
    multiplexer m;
    auto sub = subscription("SUB", 1), b = entry("B"), unsub = subscription("UNSUB", 1, "unsubscribe"),
         c = entry("C");
    m.add(sub);
    m.add(b);
    m.add(unsub);
    m.add(c);
    m.prepare_write();
    BOOST_TEST((m.on_reply(error_reply("NOPERM no permissions to run the 'subscribe' command")) ==
                multiplexer::reply_outcome::matched));
    BOOST_TEST(sub->completions == 1);
    BOOST_TEST(sub->got.at(0).str.starts_with("NOPERM"));
    BOOST_TEST(b->completions == 0);
    m.on_reply(integer_reply(2));
    BOOST_TEST(b->got.at(0).integer == 2);
    // A confirmation of another kind does not answer the UNSUBSCRIBE.
    BOOST_TEST((m.on_reply(push("subscribe", "c1")) == multiplexer::reply_outcome::push));
    BOOST_TEST(unsub->completions == 0);
    m.on_reply(push("unsubscribe", "c1"));
    BOOST_TEST(unsub->completions == 1);
    BOOST_TEST(unsub->got.empty());
    m.on_reply(integer_reply(3));
    BOOST_TEST(c->got.at(0).integer == 3);
    BOOST_TEST(!m.awaiting_replies());
}

// A request cancelled before its write leaves the queue only at the next write; meanwhile it
// must not count against a bound on queued requests.
BOOST_AUTO_TEST_CASE(requests_cancelled_before_their_write_are_not_queued) {
    multiplexer m;
    auto a = entry("A"), b = entry("B");
    m.add(a);
    m.add(b);
    BOOST_TEST(m.queued() == 2u);
    m.cancel(a, redlock::error::request_timeout);
    BOOST_TEST(m.queued() == 1u);
    BOOST_TEST(m.prepare_write() == "B");
    BOOST_TEST(m.queued() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
