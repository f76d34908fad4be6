// SPDX-License-Identifier: BSL-1.0
// The lock kinds (plain, reentrant, fair, semaphore, read-write): the calls each builds for a round, a
// cleanup and a release, and how each reads a node's answer into a vote. No server: the answers are the
// replies the scripts and commands give, written out.
#include "lock/kinds/lock_kind.hpp"

#include "lock/acquire/lock_options_check.hpp"
#include "lock/kinds/kind_keys.hpp"
#include "redis/cluster_slot.hpp"
#include "scripts/scripts_gen.hpp"
#include "support/resp_values.hpp"
#include <redlock/error.hpp>

#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using redlock::lock_options;
using redlock::owner_id;
using redlock::detail::acquire_answer;
using redlock::detail::keys_for;
using redlock::detail::make_lock_kind;
using redlock::detail::node_call;
using redlock::detail::round_request;
using redlock::detail::vote;
namespace resp = redlock::resp;
using redlock::error;
namespace scripts = redlock::scripts;
using redlock::test::bulk_reply;
using redlock::test::error_reply;
using redlock::test::integer_reply;
using redlock::test::integers_reply;

namespace {

std::vector<std::string> args_of(const node_call& c) {
    return {c.args.begin(), c.args.begin() + static_cast<std::ptrdiff_t>(c.arg_count)};
}

std::vector<std::string> keys_of(const node_call& c) {
    return {c.keys.begin(), c.keys.begin() + static_cast<std::ptrdiff_t>(c.key_count)};
}

lock_options reentrant_options(bool fenced) {
    lock_options o;
    o.ttl = 3000ms;
    o.reentrant = true;
    o.owner = owner_id("worker-7");
    o.fenced = fenced;
    return o;
}

lock_options fair_options(bool fenced) {
    lock_options o;
    o.ttl = 2000ms;
    o.fair = true;
    o.queue_timeout = 900ms;
    o.fenced = fenced;
    return o;
}

const auto keys = keys_for("app:", "orders:42");

}  // namespace

BOOST_AUTO_TEST_SUITE(lock_kind_test)

BOOST_AUTO_TEST_CASE(a_plain_round_is_one_pipeline_with_pttl_and_wait_only_when_asked) {
    lock_options o;
    o.ttl = 1500ms;
    auto kind = make_lock_kind(keys, o, {});
    node_call call;
    kind->acquire({"tok-2", "tok-1", false, false}, call);
    BOOST_TEST(call.script == nullptr);
    BOOST_TEST(call.replies() == 1u);
    resp::request set;
    set.push("SET", keys.lock, "tok-2", "NX", "PX", "1500", "GET");
    BOOST_TEST(call.pipeline.payload() == set.payload());

    // A waiter asks how long the holder's key lives; replicas add a WAIT.
    o.replicas = 2;
    o.replica_timeout = 70ms;
    kind = make_lock_kind(keys, o, {});
    node_call waiting;
    kind->acquire({"tok-2", {}, true, true}, waiting);
    BOOST_TEST(waiting.replies() == 3u);
    BOOST_TEST(waiting.pttl_reply == 1u);
    BOOST_TEST(waiting.wait_reply == 2u);
    resp::request expected;
    expected.push("SET", keys.lock, "tok-2", "NX", "PX", "1500", "GET");
    expected.push("PTTL", keys.lock);
    expected.push("WAIT", 2, 70);
    BOOST_TEST(waiting.pipeline.payload() == expected.payload());
}

BOOST_AUTO_TEST_CASE(a_plain_answer_is_a_grant_a_denial_with_the_holder_or_a_failure) {
    lock_options o;
    o.replicas = 1;
    auto kind = make_lock_kind(keys, o, {});
    node_call call;
    kind->acquire({"tok", {}, true, true}, call);

    // nil: we took it; the WAIT reply comes with the grant, judged: enough replicas have it.
    std::vector<resp::value> granted{resp::value{}, integer_reply(-2), integer_reply(1)};
    auto a = kind->read_acquire(call, {}, granted);
    BOOST_TEST((a.verdict == vote::granted));
    BOOST_REQUIRE(a.replication.has_value());
    BOOST_TEST(!a.replication->ec);

    // Too few replicas acknowledged it: not_replicated, in words; WAIT's reply not a number:
    // the node's fault.
    std::vector<resp::value> short_of_replicas{resp::value{}, integer_reply(-2), integer_reply(0)};
    a = kind->read_acquire(call, {}, short_of_replicas);
    BOOST_REQUIRE(a.replication.has_value());
    BOOST_TEST((a.replication->ec == error::not_replicated));
    BOOST_TEST(a.replication->detail.find("0 of 1 replicas") != std::string::npos);
    std::vector<resp::value> wait_refused{resp::value{}, integer_reply(-2), bulk_reply("?")};
    a = kind->read_acquire(call, {}, wait_refused);
    BOOST_REQUIRE(a.replication.has_value());
    BOOST_TEST((a.replication->ec == error::unexpected_reply));

    // Someone's token: denied, with the holder's PTTL and the value (maybe an earlier round's).
    std::vector<resp::value> held{bulk_reply("other"), integer_reply(740), integer_reply(1)};
    a = kind->read_acquire(call, {}, held);
    BOOST_TEST((a.verdict == vote::denied));
    BOOST_TEST(a.held_by == "other");
    BOOST_TEST(a.holder_pttl.value_or(0) == 740);
    BOOST_TEST(!a.node_fault);

    // A reentrant lock's hash holds the key: another owner, not a broken node.
    std::vector<resp::value> wrongtype{
        error_reply("WRONGTYPE Operation against a key holding the wrong kind"), integer_reply(500),
        integer_reply(0)};
    a = kind->read_acquire(call, {}, wrongtype);
    BOOST_TEST((a.verdict == vote::denied));
    BOOST_TEST(a.held_by.empty());

    // Any other error reply is the node's failure, with its words.
    std::vector<resp::value> oom{error_reply("OOM command not allowed"), integer_reply(0), integer_reply(0)};
    a = kind->read_acquire(call, {}, oom);
    BOOST_TEST((a.verdict == vote::failed));
    BOOST_TEST((a.ec == error::server_error));
    BOOST_TEST(a.detail == "OOM command not allowed");
    BOOST_TEST(a.node_fault);

    // A reply SET never gives.
    std::vector<resp::value> odd{integer_reply(3), integer_reply(0), integer_reply(0)};
    a = kind->read_acquire(call, {}, odd);
    BOOST_TEST((a.ec == error::unexpected_reply));
    BOOST_TEST(a.node_fault);

    // A timeout: failed, not counted against what the node said.
    a = kind->read_acquire(call, error::request_timeout, {});
    BOOST_TEST((a.verdict == vote::failed));
    BOOST_TEST((a.ec == error::request_timeout));
    BOOST_TEST(!a.node_fault);
}

BOOST_AUTO_TEST_CASE(a_fenced_plain_round_runs_acquire_fenced_and_reads_its_fence) {
    lock_options o;
    o.ttl = 800ms;
    o.fenced = true;
    auto kind = make_lock_kind(keys, o, {});
    node_call call;
    kind->acquire({"tok-2", "tok-1", false, false}, call);
    BOOST_TEST(call.script == &scripts::acquire_fenced);
    BOOST_TEST((keys_of(call) == std::vector<std::string>{keys.lock, redlock::detail::fence_key_for(keys)}));
    BOOST_TEST((args_of(call) == std::vector<std::string>{"tok-2", "800", "tok-1"}));
    // The first round has no earlier token to take over.
    node_call first;
    kind->acquire({"tok-1", {}, false, false}, first);
    BOOST_TEST((args_of(first) == std::vector<std::string>{"tok-1", "800"}));

    std::vector<resp::value> granted{integers_reply({1, 17})};
    auto a = kind->read_acquire(call, {}, granted);
    BOOST_TEST((a.verdict == vote::granted));
    BOOST_TEST(a.fence.value_or(0) == 17);
    std::vector<resp::value> denied{integers_reply({0, 250})};
    a = kind->read_acquire(call, {}, denied);
    BOOST_TEST((a.verdict == vote::denied));
    BOOST_TEST(a.holder_pttl.value_or(0) == 250);
    BOOST_TEST(!a.fence);
    std::vector<resp::value> short_reply{integers_reply({1})};
    a = kind->read_acquire(call, {}, short_reply);
    BOOST_TEST((a.ec == error::unexpected_reply));
    // A script's error reply reaches us as a failure with the server's words.
    std::vector<resp::value> refused{error_reply("NOPERM this user has no permissions")};
    a = kind->read_acquire(call, error::server_error, refused);
    BOOST_TEST((a.ec == error::server_error));
    BOOST_TEST(a.detail == "NOPERM this user has no permissions");
}

// A script cannot call WAIT: it goes right behind the script in the same request, and its
// reply follows the script's. A pipeline gets it as its last command.
BOOST_AUTO_TEST_CASE(a_wait_for_replicas_rides_behind_the_write_it_answers_for) {
    auto kind = make_lock_kind(keys, reentrant_options(false), {});
    node_call call;
    kind->acquire({"tok-2", {}, false, false}, call);
    BOOST_TEST_REQUIRE(call.script != nullptr);
    BOOST_TEST(call.replies() == 1u);
    call.wait_for_replicas(2, 70ms);
    BOOST_TEST(call.replies() == 2u);
    BOOST_TEST(call.wait_reply == 1u);
    resp::request wait;
    wait.push("WAIT", 2, 70);
    BOOST_TEST(call.after_script.payload() == wait.payload());
    BOOST_TEST(call.pipeline.empty());
    call.clear();
    BOOST_TEST(call.after_script.empty());
    BOOST_TEST(call.wait_reply == 0u);

    lock_options o;
    o.ttl = 1500ms;
    node_call pipeline;
    make_lock_kind(keys, o, {})->acquire({"tok-2", {}, true, true}, pipeline);
    pipeline.wait_for_replicas(1, 50ms);
    BOOST_TEST(pipeline.replies() == 3u);
    BOOST_TEST(pipeline.wait_reply == 2u);
    BOOST_TEST(pipeline.after_script.empty());
}

BOOST_AUTO_TEST_CASE(a_reentrant_reentry_is_a_grant_and_another_owner_a_denial_with_its_pttl) {
    auto kind = make_lock_kind(keys, reentrant_options(false), {});
    BOOST_TEST(kind->owner() == "worker-7");
    node_call call;
    kind->acquire({"tok-2", "tok-1", false, false}, call);
    BOOST_TEST(call.script == &scripts::acquire_reentrant);
    BOOST_TEST((keys_of(call) == std::vector<std::string>{keys.lock}));
    BOOST_TEST((args_of(call) == std::vector<std::string>{"worker-7", "tok-2", "3000", "tok-1"}));

    std::vector<resp::value> entered{integer_reply(2)};  // our owner, two deep
    BOOST_TEST((kind->read_acquire(call, {}, entered).verdict == vote::granted));
    std::vector<resp::value> other{integer_reply(-1200)};  // another owner, 1.2 s left
    auto a = kind->read_acquire(call, {}, other);
    BOOST_TEST((a.verdict == vote::denied));
    BOOST_TEST(a.holder_pttl.value_or(0) == 1200);
    std::vector<resp::value> no_expiry{integer_reply(0)};  // held without expiry: no bound to wait by
    a = kind->read_acquire(call, {}, no_expiry);
    BOOST_TEST((a.verdict == vote::denied));
    BOOST_TEST(!a.holder_pttl);
    // The script meets a plain lock's string: WRONGTYPE comes as the script's error.
    std::vector<resp::value> wrongtype{error_reply("WRONGTYPE Operation against a key")};
    a = kind->read_acquire(call, error::server_error, wrongtype);
    BOOST_TEST((a.verdict == vote::failed));

    // Fenced: a re-entry reports the hold's fence, not numbered anew.
    kind = make_lock_kind(keys, reentrant_options(true), {});
    node_call fenced;
    kind->acquire({"tok-2", {}, false, false}, fenced);
    BOOST_TEST(fenced.key_count == 2u);
    std::vector<resp::value> reentry{integers_reply({2, 9, 0})};
    a = kind->read_acquire(fenced, {}, reentry);
    BOOST_TEST((a.verdict == vote::granted));
    BOOST_TEST(a.fence.value_or(0) == 9);
    BOOST_TEST(!a.numbered);
    std::vector<resp::value> fresh{integers_reply({1, 10, 1})};
    a = kind->read_acquire(fenced, {}, fresh);
    BOOST_TEST(a.numbered);
    std::vector<resp::value> unfenced_shape{integer_reply(1)};
    BOOST_TEST((kind->read_acquire(fenced, {}, unfenced_shape).ec == error::unexpected_reply));
}

BOOST_AUTO_TEST_CASE(plain_and_reentrant_release_and_cleanup_by_their_scripts) {
    lock_options plain;
    auto kind = make_lock_kind(keys, plain, {});
    node_call release;
    kind->release("tok", true, release);
    BOOST_TEST(release.script == &scripts::release);
    BOOST_TEST((keys_of(release) == std::vector<std::string>{keys.lock, keys.released}));
    BOOST_TEST((args_of(release) == std::vector<std::string>{"tok"}));
    // A failed round's cleanup wakes nobody.
    node_call cleanup;
    kind->round_cleanup("tok", 0, cleanup);
    BOOST_TEST((args_of(cleanup) == std::vector<std::string>{"tok", "quiet"}));
    node_call none;
    BOOST_TEST(!kind->leave_queue("tok", none));

    kind = make_lock_kind(keys, reentrant_options(false), {});
    node_call reentrant_release;
    kind->release("tok", false, reentrant_release);
    BOOST_TEST(reentrant_release.script == &scripts::release_reentrant);
    BOOST_TEST((args_of(reentrant_release) == std::vector<std::string>{"worker-7", "tok", "quiet"}));
}

BOOST_AUTO_TEST_CASE(a_fair_round_carries_its_ticket_and_reads_the_place_the_node_gives) {
    auto kind = make_lock_kind(keys, fair_options(true), "place-1");
    const auto kept = kind->kept_between_rounds();
    BOOST_TEST(kept.leaves_trace);
    BOOST_TEST(kept.queued);
    BOOST_TEST(kept.place == "place-1");
    const auto queue = redlock::detail::fair_keys_for(keys);
    BOOST_TEST(kept.wake_channel == queue.wake_prefix + "place-1");
    BOOST_TEST(kept.lapses_after.count() == 0);
    node_call call;
    kind->acquire({"tok-2", "tok-1", false, true, 0, false}, call);
    BOOST_TEST(call.script == &scripts::fair);
    BOOST_TEST(
        (keys_of(call) == std::vector<std::string>{keys.lock, queue.queue, queue.deadlines, queue.tickets,
                                                   queue.handoffs, redlock::detail::fence_key_for(keys)}));
    BOOST_TEST((args_of(call) == std::vector<std::string>{"acquire", "place-1", "tok-2", queue.wake_prefix,
                                                          "none", "900", "2000", "wait"}));
    // Its rounds write "<place>.<n>" (fair.lua takes any earlier round's as ours); other kinds
    // a fresh token.
    BOOST_TEST(kind->round_value(3) == "place-1.3");
    BOOST_TEST(make_lock_kind(keys, reentrant_options(false), {})->round_value(3).empty());

    // With a ticket, the round carries it; without one on a single node, that node numbers us.
    node_call ticketed;
    kind->acquire({"tok-3", {}, false, true, 17, false}, ticketed);
    BOOST_TEST(args_of(ticketed)[4] == "17");
    node_call alone;
    kind->acquire({"tok-3", {}, false, true, 0, true}, alone);
    BOOST_TEST(args_of(alone)[4] == "local");

    // Granted at the head, fence 5.
    std::vector<resp::value> granted{integers_reply({1, 0, 3, -1, 5})};
    auto a = kind->read_acquire(call, {}, granted);
    BOOST_TEST((a.verdict == vote::granted));
    BOOST_TEST(a.fence.value_or(0) == 5);
    BOOST_REQUIRE(a.place.has_value());
    BOOST_TEST(a.place->ticket == 3);
    // Queued second, behind a holder with 400 ms left.
    std::vector<resp::value> queued{integers_reply({0, 400, 4, 1, 0})};
    a = kind->read_acquire(call, {}, queued);
    BOOST_TEST((a.verdict == vote::denied));
    BOOST_TEST(a.holder_pttl.value_or(0) == 400);
    BOOST_TEST(a.place->rank == 1);
    // Free but not ours (another waiter heads the queue): no holder to time the wait by.
    std::vector<resp::value> not_head{integers_reply({0, 0, 4, 1, 0})};
    BOOST_TEST(!kind->read_acquire(call, {}, not_head).holder_pttl);
    // An unfenced reply shape to a fenced call is a broken answer, with no place read from it.
    std::vector<resp::value> unfenced_shape{integers_reply({1, 0, 3, 0})};
    a = kind->read_acquire(call, {}, unfenced_shape);
    BOOST_TEST((a.ec == error::unexpected_reply));
    BOOST_TEST(!a.place);
}

BOOST_AUTO_TEST_CASE(a_fair_cleanup_requeues_at_our_ticket_and_a_release_hands_over) {
    auto kind = make_lock_kind(keys, fair_options(false), "place-1");
    const auto queue = redlock::detail::fair_keys_for(keys);
    node_call requeue;
    kind->round_cleanup("tok", 12, requeue);
    BOOST_TEST(requeue.key_count == 5u);
    BOOST_TEST((args_of(requeue) ==
                std::vector<std::string>{"requeue", "place-1", "tok", queue.wake_prefix, "12", "900"}));
    node_call withdraw;
    kind->round_cleanup("tok", 0, withdraw);
    BOOST_TEST(args_of(withdraw)[0] == "withdraw");
    node_call release;
    kind->release("place-1:tok", false, release);
    BOOST_TEST((args_of(release) ==
                std::vector<std::string>{"release", "place-1", "place-1:tok", queue.wake_prefix, "0", "0"}));
    node_call dequeue;
    BOOST_TEST(kind->leave_queue("tok", dequeue));
    BOOST_TEST(args_of(dequeue)[0] == "dequeue");
}

BOOST_AUTO_TEST_CASE(each_kind_builds_its_extend_and_only_a_plain_lock_takes_over_an_earlier_round) {
    lock_options plain;
    plain.ttl = 1500ms;
    auto kind = make_lock_kind(keys, plain, {});
    node_call extend;
    kind->extend("tok", 4000ms, extend);
    BOOST_TEST(extend.script == &scripts::extend);
    BOOST_TEST((keys_of(extend) == std::vector<std::string>{keys.lock}));
    BOOST_TEST((args_of(extend) == std::vector<std::string>{"tok", "4000"}));
    BOOST_TEST(kind->extends_in_batches());
    node_call takeover;
    BOOST_TEST(kind->take_over("tok-1", "tok-2", takeover));
    BOOST_TEST(takeover.script == &scripts::takeover);
    BOOST_TEST((args_of(takeover) == std::vector<std::string>{"tok-1", "tok-2", "1500"}));

    // A reentrant lock extends its owner's hash, one lease at a time.
    kind = make_lock_kind(keys, reentrant_options(false), {});
    node_call reentrant_extend;
    kind->extend("tok", 3000ms, reentrant_extend);
    BOOST_TEST(reentrant_extend.script == &scripts::extend_reentrant);
    BOOST_TEST((args_of(reentrant_extend) == std::vector<std::string>{"worker-7", "tok", "3000"}));
    BOOST_TEST(!kind->extends_in_batches());
    node_call none;
    BOOST_TEST(!kind->take_over("tok-1", "tok-2", none));

    // A fair lock's key holds a token, as a plain lock's does.
    kind = make_lock_kind(keys, fair_options(false), "place-1");
    node_call fair_extend;
    kind->extend("place-1:tok", 2000ms, fair_extend);
    BOOST_TEST(fair_extend.script == &scripts::extend);
    BOOST_TEST(!kind->take_over("tok-1", "tok-2", none));
}

BOOST_AUTO_TEST_CASE(a_fence_write_back_names_the_counter_and_a_reentrant_owner) {
    lock_options fenced;
    fenced.fenced = true;
    auto kind = make_lock_kind(keys, fenced, {});
    BOOST_TEST(kind->fence_key() == redlock::detail::fence_key_for(keys));
    node_call write_back;
    const std::vector<std::uint64_t> fence_42{42};
    kind->write_back_fence("tok", fence_42, write_back);
    BOOST_TEST(write_back.script == &scripts::fence_writeback);
    BOOST_TEST((keys_of(write_back) == std::vector<std::string>{keys.lock, kind->fence_key()}));
    BOOST_TEST((args_of(write_back) == std::vector<std::string>{"tok", "42"}));

    kind = make_lock_kind(keys, reentrant_options(true), {});
    node_call owned;
    const std::vector<std::uint64_t> fence_7{7};
    kind->write_back_fence("tok", fence_7, owned);
    BOOST_TEST((args_of(owned) == std::vector<std::string>{"tok", "7", "worker-7"}));

    BOOST_TEST(make_lock_kind(keys, lock_options{}, {})->fence_key().empty());
}

BOOST_AUTO_TEST_CASE(a_semaphore_round_names_its_permits_and_reads_a_grant_a_full_set_or_a_mismatch) {
    lock_options o;
    o.ttl = 2500ms;
    o.permits = 4;
    auto kind = make_lock_kind(keys, o, {});
    node_call call;
    kind->acquire({"tok-2", "tok-1", true, false}, call);
    BOOST_TEST(call.script == &scripts::semaphore_acquire);
    // The read-write lock's modes: a sorted set with them is no semaphore's.
    BOOST_TEST(keys_of(call) == (std::vector<std::string>{keys.lock, "{app:orders:42}:rw"}));
    BOOST_TEST(args_of(call) == (std::vector<std::string>{"tok-2", "2500", "4", "tok-1"}));

    std::vector<resp::value> granted{integers_reply({1, 0})};
    BOOST_TEST((kind->read_acquire(call, {}, granted).verdict == vote::granted));

    // Every permit taken: denied, and a waiter sleeps at most until the first one expires.
    std::vector<resp::value> full{integers_reply({0, 830})};
    auto a = kind->read_acquire(call, {}, full);
    BOOST_TEST((a.verdict == vote::denied));
    BOOST_TEST(a.holder_pttl.value_or(0) == 830);

    // Permits in use under another count: the caller's mistake, in words, not the node's fault.
    std::vector<resp::value> mismatch{integers_reply({-1, 3})};
    a = kind->read_acquire(call, {}, mismatch);
    BOOST_TEST((a.verdict == vote::failed));
    BOOST_TEST((a.ec == error::permits_mismatch));
    BOOST_TEST(!a.node_fault);
    BOOST_TEST(a.detail.find("permits = 3, this acquire asks for 4") != std::string::npos, a.detail);

    // Any other shape is the node's fault.
    std::vector<resp::value> odd{integers_reply({7, 0})};
    a = kind->read_acquire(call, {}, odd);
    BOOST_TEST((a.ec == error::unexpected_reply));
    BOOST_TEST(a.node_fault);
    std::vector<resp::value> one{integer_reply(1)};
    BOOST_TEST((kind->read_acquire(call, {}, one).ec == error::unexpected_reply));
}

BOOST_AUTO_TEST_CASE(a_semaphore_releases_cleans_up_and_extends_its_own_permit) {
    lock_options o;
    o.permits = 2;
    auto kind = make_lock_kind(keys, o, {});
    const std::vector<std::string> permit_keys{keys.lock};

    node_call release;
    kind->release("tok", true, release);
    BOOST_TEST(release.script == &scripts::semaphore_release);
    BOOST_TEST(keys_of(release) == (std::vector<std::string>{keys.lock, keys.released}));
    BOOST_TEST(args_of(release) == (std::vector<std::string>{"tok"}));

    node_call cleanup;  // a failed round's: wakes nobody
    kind->round_cleanup("tok", 0, cleanup);
    BOOST_TEST(cleanup.script == &scripts::semaphore_release);
    BOOST_TEST(args_of(cleanup) == (std::vector<std::string>{"tok", "quiet"}));

    node_call extend;
    kind->extend("tok", 900ms, extend);
    BOOST_TEST(extend.script == &scripts::semaphore_extend);
    BOOST_TEST(keys_of(extend) == permit_keys);
    BOOST_TEST(args_of(extend) == (std::vector<std::string>{"tok", "900"}));
    BOOST_TEST(!kind->extends_in_batches());  // extend_batch.lua knows plain keys only
    node_call takeover;
    BOOST_TEST(!kind->take_over("old", "tok", takeover));  // the acquire gives back an earlier round's
}

BOOST_AUTO_TEST_CASE(a_semaphore_takes_a_count_in_range_and_no_option_that_needs_one_holder) {
    const redlock::client_config cfg;
    std::string why;
    const auto check = [&](auto change) {
        lock_options o;
        o.permits = 3;
        change(o);
        return redlock::detail::validate_lock_options(cfg, "jobs", o, why);
    };
    BOOST_TEST(!check([](lock_options&) {}));
    BOOST_TEST(!check([](lock_options& o) { o.replicas = 1; }));  // WAIT follows its grants too
    BOOST_TEST(!check([](lock_options& o) { o.permits = 1000000; }));
    for (auto bad : std::vector<void (*)(lock_options&)>{
             [](lock_options& o) { o.permits = -1; }, [](lock_options& o) { o.permits = 1000001; },
             [](lock_options& o) { o.fenced = true; }, [](lock_options& o) { o.fair = true; },
             [](lock_options& o) {
                 o.reentrant = true;
                 o.owner = owner_id("w");
             }}) {
        BOOST_TEST((check(bad) == error::invalid_config));
        BOOST_TEST(why.find("lock_options::permits") != std::string::npos, why);
    }
}

BOOST_AUTO_TEST_CASE(a_writer_that_waits_marks_the_resource_and_reads_a_grant_a_refusal_or_an_upgrade) {
    auto o = reentrant_options(false);
    o.mode = redlock::lock_mode::write;
    o.queue_timeout = 4500ms;
    auto kind = make_lock_kind(keys, o, {});
    const auto kept = kind->kept_between_rounds();
    BOOST_TEST(kept.leaves_trace);
    BOOST_TEST(!kept.queued);
    BOOST_TEST(kept.lapses_after.count() == 4500);
    BOOST_TEST((kind->mode() == redlock::lock_mode::write));
    BOOST_TEST(kind->owner() == "worker-7");
    const std::vector<std::string> rw_keys{keys.lock, "{app:orders:42}:rw", "{app:orders:42}:rw:waiting",
                                           "{app:orders:42}:fence"};
    node_call waits;
    kind->acquire({"tok-2", "tok-1", false, true}, waits);
    BOOST_TEST(waits.script == &scripts::rw_acquire);
    BOOST_TEST(keys_of(waits) == rw_keys);
    BOOST_TEST(args_of(waits) ==
               (std::vector<std::string>{"tok-2", "3000", "w", "worker-7", "4500", "0", "tok-1"}));
    node_call once;  // no wait: no mark
    kind->acquire({"tok", {}, false, false}, once);
    BOOST_TEST(args_of(once) == (std::vector<std::string>{"tok", "3000", "w", "worker-7", "0", "0"}));

    std::vector<resp::value> granted{integers_reply({1, 0})};
    BOOST_TEST((kind->read_acquire(once, {}, granted).verdict == vote::granted));
    std::vector<resp::value> refused{integers_reply({0, 120})};
    auto a = kind->read_acquire(once, {}, refused);
    BOOST_TEST((a.verdict == vote::denied));
    BOOST_TEST(a.holder_pttl.value_or(0) == 120);
    // The owner only reads: the caller's mistake, in words, not the node's fault.
    std::vector<resp::value> upgrade{integers_reply({-1, 0})};
    a = kind->read_acquire(once, {}, upgrade);
    BOOST_TEST((a.verdict == vote::failed));
    BOOST_TEST((a.ec == error::upgrade_refused));
    BOOST_TEST(!a.node_fault);
    BOOST_TEST(a.detail.find("\"worker-7\" holds it for reading") != std::string::npos, a.detail);
    std::vector<resp::value> odd{integers_reply({2, 0})};
    BOOST_TEST((kind->read_acquire(once, {}, odd).ec == error::unexpected_reply));

    // A reader never marks, never answers -1, and is never numbered.
    auto r = lock_options{};
    r.mode = redlock::lock_mode::read;
    auto reader = make_lock_kind(keys, r, {});
    BOOST_TEST(!reader->kept_between_rounds().leaves_trace);
    BOOST_TEST(reader->owner().empty());
    node_call read;
    reader->acquire({"tok", {}, false, true}, read);
    BOOST_TEST(args_of(read) == (std::vector<std::string>{"tok", "10000", "r", "", "0", "0"}));
    BOOST_TEST((reader->read_acquire(read, {}, upgrade).ec == error::unexpected_reply));
}

BOOST_AUTO_TEST_CASE(
    a_fenced_writer_reads_its_fence_and_a_read_write_hold_is_released_extended_and_cleaned_up) {
    lock_options o;
    o.mode = redlock::lock_mode::write;
    o.fenced = true;
    auto kind = make_lock_kind(keys, o, {});
    node_call call;
    kind->acquire({"tok", {}, false, false}, call);
    BOOST_TEST(args_of(call).at(5) == "1");
    std::vector<resp::value> numbered{integers_reply({1, 17})};
    auto a = kind->read_acquire(call, {}, numbered);
    BOOST_TEST((a.verdict == vote::granted));
    BOOST_TEST(a.fence.value_or(0) == 17);
    std::vector<resp::value> unnumbered{integers_reply({1, 0})};  // a fenced grant without a fence
    BOOST_TEST((kind->read_acquire(call, {}, unnumbered).ec == error::unexpected_reply));

    const std::vector<std::string> release_keys{keys.lock, "{app:orders:42}:rw", "{app:orders:42}:rw:waiting",
                                                keys.released};
    node_call release;
    kind->release("tok", true, release);
    BOOST_TEST(release.script == &scripts::rw_release);
    BOOST_TEST(keys_of(release) == release_keys);
    BOOST_TEST(args_of(release) == (std::vector<std::string>{"tok"}));
    node_call leave;  // the acquisition's end: the hold and the mark
    kind->release("tok", false, leave);
    BOOST_TEST(args_of(leave) == (std::vector<std::string>{"tok", "leave"}));
    node_call cleanup;  // between rounds: the hold only, the mark stays
    kind->round_cleanup("tok", 0, cleanup);
    BOOST_TEST(args_of(cleanup) == (std::vector<std::string>{"tok", "quiet"}));
    node_call unmark;  // a won round's refusers: the mark only
    BOOST_TEST(kind->leave_queue("tok", unmark));
    BOOST_TEST(args_of(unmark) == (std::vector<std::string>{"tok", "unmark"}));
    node_call extend;
    kind->extend("tok", 700ms, extend);
    BOOST_TEST(extend.script == &scripts::rw_extend);
    BOOST_TEST(keys_of(extend) == (std::vector<std::string>{keys.lock, "{app:orders:42}:rw"}));
    BOOST_TEST(args_of(extend) == (std::vector<std::string>{"tok", "700"}));
    BOOST_TEST(!kind->extends_in_batches());
}

BOOST_AUTO_TEST_CASE(a_read_write_lock_is_neither_fair_nor_a_semaphore_and_only_a_plain_writer_is_fenced) {
    const redlock::client_config cfg;
    std::string why;
    const auto check = [&](redlock::lock_mode mode, auto change) {
        lock_options o;
        o.mode = mode;
        change(o);
        return redlock::detail::validate_lock_options(cfg, "doc", o, why);
    };
    using redlock::lock_mode;
    const auto owned = [](lock_options& o) {
        o.reentrant = true;
        o.owner = owner_id("w");
    };
    BOOST_TEST(!check(lock_mode::read, [](lock_options&) {}));
    BOOST_TEST(!check(lock_mode::read, owned));
    BOOST_TEST(!check(lock_mode::write, owned));
    BOOST_TEST(!check(lock_mode::write, [](lock_options& o) { o.fenced = true; }));
    BOOST_TEST(!check(lock_mode::write, [](lock_options& o) { o.replicas = 1; }));
    for (auto mode : {lock_mode::read, lock_mode::write}) {
        for (auto bad : std::vector<void (*)(lock_options&)>{[](lock_options& o) { o.fair = true; },
                                                             [](lock_options& o) { o.permits = 2; },
                                                             [](lock_options& o) { o.queue_timeout = 2ms; },
                                                             [](lock_options& o) {
                                                                 o.fenced = true;
                                                                 o.reentrant = true;
                                                                 o.owner = owner_id("w");
                                                             }}) {
            BOOST_TEST((check(mode, bad) == error::invalid_config));
        }
    }
    BOOST_TEST((check(lock_mode::read, [](lock_options& o) { o.fenced = true; }) == error::invalid_config));
    BOOST_TEST(why.find("lock_options::mode") != std::string::npos, why);
}

BOOST_AUTO_TEST_CASE(several_resources_take_check_extend_and_release_every_key_and_name_the_one_held) {
    lock_options o;
    o.ttl = 1500ms;
    auto kind = redlock::detail::make_multi_kind("app:", {"a", "b", "c"}, o, false);
    const auto span_of = [](const node_call& c) {
        const auto all = c.key_span();
        return std::vector<std::string>(all.begin(), all.end());
    };
    const std::vector<std::string> locks{"{app:a}:lock", "{app:b}:lock", "{app:c}:lock"};
    BOOST_TEST((std::vector<std::string>(kind->resources().begin(), kind->resources().end()) ==
                std::vector<std::string>{"a", "b", "c"}));

    node_call call;
    kind->acquire({"tok-2", "tok-1", true, false}, call);
    BOOST_TEST(call.script == &scripts::multi_acquire);
    BOOST_TEST(span_of(call) == locks);
    BOOST_TEST(call.route_key() == "{app:a}:lock");
    BOOST_TEST(args_of(call) == (std::vector<std::string>{"tok-2", "1500", "plain", "tok-1"}));
    // Not built for a cluster: no steps.
    BOOST_TEST(call.steps.empty());
    BOOST_TEST(call.undo.empty());

    std::vector<resp::value> granted{integers_reply({1, 0})};
    BOOST_TEST((kind->read_acquire(call, {}, granted).verdict == vote::granted));
    // Refused by the second key: a waiter listens on that resource's channel.
    std::vector<resp::value> held{integers_reply({0, 640, 2})};
    auto a = kind->read_acquire(call, {}, held);
    BOOST_TEST((a.verdict == vote::denied));
    BOOST_TEST(a.holder_pttl.value_or(0) == 640);
    BOOST_TEST(a.blocked_by == 1u);
    BOOST_TEST(kind->released_channel(a.blocked_by) == "{app:b}:released");
    // An index out of range, or any other shape, is the node's fault.
    for (const auto& odd : {integers_reply({0, 640, 4}), integers_reply({0, 640, 0}),
                            integers_reply({0, 640}), integers_reply({2, 0})}) {
        std::vector<resp::value> replies{odd};
        a = kind->read_acquire(call, {}, replies);
        BOOST_TEST((a.ec == error::unexpected_reply));
        BOOST_TEST(a.node_fault);
    }

    node_call release;
    kind->release("tok", true, release);
    BOOST_TEST(release.script == &scripts::multi_release);
    BOOST_TEST(span_of(release) ==
               (std::vector<std::string>{"{app:a}:lock", "{app:b}:lock", "{app:c}:lock", "{app:a}:released",
                                         "{app:b}:released", "{app:c}:released"}));
    BOOST_TEST(args_of(release) == (std::vector<std::string>{"tok"}));
    node_call cleanup;
    kind->round_cleanup("tok", 0, cleanup);
    BOOST_TEST(args_of(cleanup) == (std::vector<std::string>{"tok", "quiet"}));

    node_call extend;
    kind->extend("tok", 4000ms, extend);
    BOOST_TEST(extend.script == &scripts::multi_extend);
    BOOST_TEST(span_of(extend) == locks);
    BOOST_TEST(args_of(extend) == (std::vector<std::string>{"tok", "4000"}));
    BOOST_TEST(!kind->extends_in_batches());
    node_call check;
    kind->check("tok", check);
    BOOST_TEST(check.script == &scripts::multi_check);
    BOOST_TEST(span_of(check) == locks);

    // The options a lock over several resources takes: a plain lock's only.
    redlock::client_config cfg;
    std::string why;
    BOOST_TEST(!redlock::detail::validate_several_resources(cfg, {"a", "b"}, o, why));
    auto fenced = o;
    fenced.fenced = true;
    BOOST_TEST(!redlock::detail::validate_several_resources(cfg, {"a", "b"}, fenced, why));
    auto reentrant = o;
    reentrant.reentrant = true;
    reentrant.owner = owner_id("me");
    BOOST_TEST((redlock::detail::validate_several_resources(cfg, {"a", "b"}, reentrant, why) ==
                error::invalid_config));
    BOOST_TEST(
        (redlock::detail::validate_several_resources(cfg, {"", "b"}, o, why) == error::invalid_resource));
}

BOOST_AUTO_TEST_CASE(several_fenced_resources_carry_a_fence_each_and_write_them_back_together) {
    lock_options o;
    o.ttl = 1500ms;
    o.fenced = true;
    auto kind = redlock::detail::make_multi_kind("app:", {"a", "b"}, o, false);
    const auto span_of = [](const node_call& c) {
        const auto all = c.key_span();
        return std::vector<std::string>(all.begin(), all.end());
    };
    const std::vector<std::string> locks_and_counters{"{app:a}:lock", "{app:b}:lock", "{app:a}:fence",
                                                      "{app:b}:fence"};
    node_call call;
    kind->acquire({"tok-2", "", false, false}, call);
    BOOST_TEST(span_of(call) == locks_and_counters);
    BOOST_TEST(args_of(call) == (std::vector<std::string>{"tok-2", "1500", "fenced"}));

    std::vector<resp::value> granted{integers_reply({1, 12, 3})};
    auto a = kind->read_acquire(call, {}, granted);
    BOOST_TEST((a.verdict == vote::granted));
    BOOST_TEST((a.fences == std::vector<std::int64_t>{12, 3}));
    BOOST_TEST(a.fence.value_or(0) == 12);
    BOOST_TEST(a.all_fences().size() == 2u);
    // A grant without a fence per resource is the node's fault.
    std::vector<resp::value> short_reply{integers_reply({1, 12})};
    BOOST_TEST((kind->read_acquire(call, {}, short_reply).ec == error::unexpected_reply));

    node_call back;
    const std::vector<std::uint64_t> settled{14, 3};
    kind->write_back_fence("tok-2", settled, back);
    BOOST_TEST(back.script == &scripts::multi_fence_writeback);
    BOOST_TEST(span_of(back) == locks_and_counters);
    BOOST_TEST(args_of(back) == (std::vector<std::string>{"tok-2", "14 3"}));
}

BOOST_AUTO_TEST_CASE(several_resources_for_a_cluster_come_split_into_a_step_per_slot_in_slot_order) {
    using redlock::detail::step_merge;
    using redlock::redis::detail::key_slot;
    lock_options o;
    o.ttl = 1500ms;
    o.fenced = true;
    const auto slot_of = [](const std::string& r) { return key_slot("{app:" + r + "}:lock"); };
    // A third resource on "a"'s slot: the two make one step.
    std::string peer;
    for (int i = 0; peer.empty(); ++i)
        if (auto r = "peer-" + std::to_string(i); slot_of(r) == slot_of("a")) peer = r;
    BOOST_REQUIRE(slot_of("a") != slot_of("b"));
    const std::vector<std::string> names{"a", "b", peer};  // sorted, as the client sorts them
    auto kind = redlock::detail::make_multi_kind("app:", names, o, true);
    const auto span_of = [](const node_call& c) {
        const auto all = c.key_span();
        return std::vector<std::string>(all.begin(), all.end());
    };
    // The steps in slot order, each with its resources in the whole call's order.
    const bool a_first = slot_of("a") < slot_of("b");
    const std::vector<std::vector<std::size_t>> members =
        a_first ? std::vector<std::vector<std::size_t>>{{0, 2}, {1}}
                : std::vector<std::vector<std::size_t>>{{1}, {0, 2}};
    const std::vector<std::string> a_keys{"{app:a}:lock", "{app:" + peer + "}:lock", "{app:a}:fence",
                                          "{app:" + peer + "}:fence"};
    const std::vector<std::string> b_keys{"{app:b}:lock", "{app:b}:fence"};
    const auto& first_keys = a_first ? a_keys : b_keys;
    const auto& second_keys = a_first ? b_keys : a_keys;

    node_call call;
    kind->acquire({"tok-2", "tok-1", true, false}, call);
    // The whole call, for the nodes that are single servers.
    BOOST_TEST(call.script == &scripts::multi_acquire);
    BOOST_TEST(call.key_span().size() == 6u);
    BOOST_TEST((call.merge == step_merge::acquire_fenced));
    BOOST_TEST(call.step_members == members);
    BOOST_REQUIRE(call.steps.size() == 2u);
    BOOST_TEST(call.steps.front().script == &scripts::multi_acquire);
    BOOST_TEST(span_of(call.steps.front()) == first_keys);
    BOOST_TEST(span_of(call.steps.back()) == second_keys);
    BOOST_TEST(args_of(call.steps.back()) == (std::vector<std::string>{"tok-2", "1500", "fenced", "tok-1"}));
    // Each step undone by a release of its own resources, with this round's token, announced:
    // a waiter refused by the brief hold is woken.
    BOOST_REQUIRE(call.undo.size() == 2u);
    BOOST_TEST(call.undo.front().script == &scripts::multi_release);
    BOOST_TEST(args_of(call.undo.front()) == (std::vector<std::string>{"tok-2"}));
    BOOST_TEST(span_of(call.undo.back()).size() == (a_first ? 2u : 4u));
    BOOST_TEST(span_of(call.undo.back()).front() == second_keys.front());

    // Cleared for the next round (as a round does), the steps go with the rest.
    call.clear();
    BOOST_TEST(call.steps.empty());
    BOOST_TEST(call.undo.empty());
    BOOST_TEST(call.step_members.empty());
    kind->acquire({"tok-3", "", true, false}, call);
    BOOST_TEST(call.steps.size() == 2u);

    node_call release;
    kind->release("tok", true, release);
    BOOST_TEST((release.merge == step_merge::release));
    BOOST_REQUIRE(release.steps.size() == 2u);
    BOOST_TEST(args_of(release.steps.front()) == (std::vector<std::string>{"tok"}));
    BOOST_TEST(release.undo.empty());
    node_call extend;
    kind->extend("tok", 4000ms, extend);
    BOOST_TEST((extend.merge == step_merge::all_ones));
    BOOST_REQUIRE(extend.steps.size() == 2u);
    BOOST_TEST(args_of(extend.steps.back()) == (std::vector<std::string>{"tok", "4000"}));
    node_call check;
    kind->check("tok", check);
    BOOST_TEST((check.merge == step_merge::shortest_hold));
    BOOST_TEST(check.steps.size() == 2u);
    // The fences, one per resource in the whole call's order, go to the step of each resource.
    node_call back;
    const std::vector<std::uint64_t> settled{14, 3, 7};
    kind->write_back_fence("tok", settled, back);
    BOOST_REQUIRE(back.steps.size() == 2u);
    BOOST_TEST(args_of(back.steps.front()) == (std::vector<std::string>{"tok", a_first ? "14 7" : "3"}));
    BOOST_TEST(args_of(back.steps.back()) == (std::vector<std::string>{"tok", a_first ? "3" : "14 7"}));
    // Every resource's lock key votes.
    BOOST_TEST(kind->lock_keys().size() == 3u);

    // All on one slot: one script call does it, no steps.
    auto one_slot = redlock::detail::make_multi_kind("app:", {"a", peer}, o, true);
    node_call whole;
    one_slot->acquire({"tok", "", true, false}, whole);
    BOOST_TEST(whole.steps.empty());
}

// A hand-over (client::async_adopt) puts the adopter's token in the first one's place, by the
// shape of each kind's hold: the lock key's value, a reentrant owner's hash, a permit, a
// read-write hold with its mode, or every key of several resources; the kinds with an owner
// name the one that holds and the one that is to.
BOOST_AUTO_TEST_CASE(each_kind_hands_its_hold_over_by_the_shape_of_its_keys) {
    const auto span_of = [](const node_call& c) {
        const auto all = c.key_span();
        return std::vector<std::string>(all.begin(), all.end());
    };
    const auto handover_of = [&](const lock_options& o) {
        node_call call;
        const auto kind = make_lock_kind(keys, o, "place-1");  // the call's keys are views into it
        kind->hand_over({"old", "new", "worker-7", "adopter-1", 4000ms}, call);
        BOOST_TEST(call.script == &scripts::handover);
        return std::make_pair(span_of(call), args_of(call));
    };
    const std::vector<std::string> lock_only{keys.lock};
    lock_options plain;
    plain.ttl = 1500ms;
    BOOST_TEST((handover_of(plain).first == lock_only));
    BOOST_TEST((handover_of(plain).second == std::vector<std::string>{"string", "old", "new", "4000"}));
    BOOST_TEST(
        (handover_of(fair_options(true)).second == std::vector<std::string>{"string", "old", "new", "4000"}));
    BOOST_TEST((handover_of(reentrant_options(true)).first == lock_only));
    BOOST_TEST((handover_of(reentrant_options(true)).second ==
                std::vector<std::string>{"reentrant", "old", "new", "4000", "worker-7", "adopter-1"}));
    lock_options semaphore = plain;
    semaphore.permits = 3;
    BOOST_TEST((handover_of(semaphore).first == lock_only));
    BOOST_TEST((handover_of(semaphore).second == std::vector<std::string>{"permit", "old", "new", "4000"}));
    lock_options reader = plain;
    reader.mode = redlock::lock_mode::read;
    BOOST_TEST((handover_of(reader).first == std::vector<std::string>{keys.lock, "{app:orders:42}:rw"}));
    BOOST_TEST((handover_of(reader).second ==
                std::vector<std::string>{"rw", "old", "new", "4000", "worker-7", "adopter-1"}));

    auto several = redlock::detail::make_multi_kind("app:", {"a", "b"}, plain, false);
    node_call call;
    several->hand_over({"old", "new", "", "", 4000ms}, call);
    BOOST_TEST((span_of(call) == std::vector<std::string>{"{app:a}:lock", "{app:b}:lock"}));
    BOOST_TEST((args_of(call) == std::vector<std::string>{"string", "old", "new", "4000"}));
    BOOST_TEST(call.steps.empty());
    // On a cluster, one call per slot, each all or none.
    auto split = redlock::detail::make_multi_kind("app:", {"a", "b"}, plain, true);
    node_call by_slot;
    split->hand_over({"old", "new", "", "", 4000ms}, by_slot);
    BOOST_TEST(by_slot.steps.size() == 2u);
    for (const auto& step : by_slot.steps) {
        BOOST_TEST(step.script == &scripts::handover);
        BOOST_TEST(span_of(step).size() == 1u);
    }
}

BOOST_AUTO_TEST_SUITE_END()
