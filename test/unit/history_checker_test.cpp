// SPDX-License-Identifier: BSL-1.0
// The chaos harness's history checker on histories written by hand: each rule reports the
// smallest history that breaks it and stays quiet on one that keeps it.
#include "fault/chaos/history_checker.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <filesystem>

#include <unistd.h>

namespace chaos = redlock::chaos;

namespace {

constexpr chaos::nanos ms = 1'000'000;

chaos::hold_record hold(std::string resource, std::string token, std::uint64_t fence, chaos::nanos acquired,
                        chaos::nanos ended, chaos::nanos valid_until) {
    chaos::hold_record h;
    h.resource = std::move(resource);
    h.kind = fence == 0 ? "plain" : "fenced";
    h.token = std::move(token);
    h.fence = fence;
    h.invoked = acquired - ms;
    h.acquired = acquired;
    h.ended = ended;
    h.valid_until = valid_until;
    h.granted_until = acquired + ms;
    h.ttl_ms = 1000;
    h.outcome = "released";
    return h;
}

chaos::worker_summary clean_summary(int worker) {
    chaos::worker_summary s;
    s.worker = worker;
    s.scopes_started = s.scopes_ended = 3;
    return s;
}

std::vector<std::string> rules(const std::vector<chaos::violation>& v) {
    std::vector<std::string> out;
    for (const auto& x : v)
        out.push_back(x.rule);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(history_checker)

BOOST_AUTO_TEST_CASE(holds_one_after_another_with_rising_fences_pass) {
    chaos::history h;
    h.holds = {hold("r", "a", 1, 0, 10 * ms, 50 * ms), hold("r", "b", 2, 11 * ms, 20 * ms, 60 * ms),
               hold("s", "c", 0, 5 * ms, 30 * ms, 60 * ms)};
    h.summaries = {clean_summary(0)};
    const auto v = chaos::check_history(h, {{"r", {{1, "a", ""}, {1, "a", ""}, {2, "b", ""}}}}, 1);
    BOOST_TEST(v.empty());
}

BOOST_AUTO_TEST_CASE(an_overlap_is_reported_with_both_holds) {
    chaos::history h;
    h.holds = {hold("r", "a", 0, 0, 10 * ms, 50 * ms), hold("r", "b", 0, 9 * ms, 20 * ms, 60 * ms)};
    h.summaries = {clean_summary(0)};
    const auto v = chaos::check_history(h, {}, 1);
    BOOST_TEST_REQUIRE(v.size() == 1u);
    BOOST_TEST(v[0].rule == "mutual_exclusion");
    BOOST_TEST_REQUIRE(v[0].evidence.size() == 2u);
    BOOST_TEST(v[0].evidence[0].find("\"token\":\"a\"") != std::string::npos);
    BOOST_TEST(v[0].evidence[1].find("\"token\":\"b\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_hold_ends_at_its_validity_not_at_its_scope) {
    chaos::history h;
    // a's scope ran to 30 ms, but its lease was valid only until 10 ms (a paused client): b,
    // granted at 12 ms, does not overlap it.
    h.holds = {hold("r", "a", 1, 0, 30 * ms, 10 * ms), hold("r", "b", 2, 12 * ms, 20 * ms, 60 * ms)};
    h.summaries = {clean_summary(0)};
    BOOST_TEST(chaos::check_history(h, {}, 1).empty());
    // Valid until 13 ms: it does.
    h.holds[0].valid_until = 13 * ms;
    BOOST_TEST(rules(chaos::check_history(h, {}, 1)) == std::vector<std::string>{"mutual_exclusion"});
}

// The sweep over holds sorted by start compares each hold with those still running:
// A = [0, 100], B = [10, 20], C = [30, 40]. B and C overlap A; C does not overlap B, and is
// reported against A (a sweep that kept only the previous hold would miss it).
BOOST_AUTO_TEST_CASE(the_overlap_sweep_keeps_the_hold_that_ends_last) {
    chaos::history h;
    h.holds = {hold("r", "A", 0, 0, 100 * ms, 200 * ms), hold("r", "B", 0, 10 * ms, 20 * ms, 200 * ms),
               hold("r", "C", 0, 30 * ms, 40 * ms, 200 * ms)};
    h.summaries = {clean_summary(0)};
    const auto v = chaos::check_history(h, {}, 1);
    BOOST_TEST_REQUIRE(rules(v) == (std::vector<std::string>{"mutual_exclusion", "mutual_exclusion"}));
    BOOST_TEST(v[0].evidence.at(0).find("\"token\":\"A\"") != std::string::npos);
    BOOST_TEST(v[0].evidence.at(1).find("\"token\":\"B\"") != std::string::npos);
    BOOST_TEST(v[1].evidence.at(0).find("\"token\":\"A\"") != std::string::npos);
    BOOST_TEST(v[1].evidence.at(1).find("\"token\":\"C\"") != std::string::npos);
}

// Reads share with reads only: the negative control of the read-write model is a write beside
// reads (either one first), which the checker reports.
BOOST_AUTO_TEST_CASE(reads_overlap_each_other_but_a_write_overlaps_nothing) {
    chaos::history h;
    const auto as = [](chaos::hold_record r, const char* kind) {
        r.kind = kind;
        return r;
    };
    h.holds = {as(hold("rw", "r1", 0, 0, 50 * ms, 200 * ms), "read"),
               as(hold("rw", "r2", 0, 10 * ms, 60 * ms, 200 * ms), "read"),
               as(hold("rw", "w1", 0, 70 * ms, 80 * ms, 200 * ms), "write"),
               as(hold("rw", "r3", 0, 90 * ms, 95 * ms, 200 * ms), "read")};
    h.summaries = {clean_summary(0)};
    BOOST_TEST(chaos::check_history(h, {}, 1).empty());

    // A write while r1 and r2 read, and a read while the write runs.
    h.holds[2].acquired = 40 * ms;
    h.holds[3].acquired = 75 * ms;
    const auto v = chaos::check_history(h, {}, 1);
    BOOST_TEST_REQUIRE(rules(v) == (std::vector<std::string>{"mutual_exclusion", "mutual_exclusion"}));
    BOOST_TEST(v[0].evidence.at(0).find("\"token\":\"r1\"") != std::string::npos);
    BOOST_TEST(v[0].evidence.at(1).find("\"token\":\"w1\"") != std::string::npos);
    BOOST_TEST(v[1].detail.find("a read hold began") != std::string::npos, v[1].detail);
    BOOST_TEST(v[1].detail.find("before a write hold ended") != std::string::npos, v[1].detail);
}

// A semaphore's holds overlap up to their bound; the negative control is one more.
BOOST_AUTO_TEST_CASE(a_semaphore_holds_up_to_its_bound_and_one_more_is_reported) {
    chaos::history h;
    for (int i = 0; i < 3; ++i) {
        auto r = hold("sem", "p" + std::to_string(i), 0, i * ms, 50 * ms, 200 * ms);
        r.kind = "semaphore";
        r.holders_allowed = 3;
        h.holds.push_back(r);
    }
    h.summaries = {clean_summary(0)};
    BOOST_TEST(chaos::check_history(h, {}, 1).empty());
    auto fourth = h.holds[0];
    fourth.token = "p3";
    fourth.acquired = 20 * ms;
    h.holds.push_back(fourth);
    const auto v = chaos::check_history(h, {}, 1);
    BOOST_TEST_REQUIRE(rules(v) == std::vector<std::string>{"permits_exceeded"});
    BOOST_TEST(v[0].evidence.size() == 4u);
    BOOST_TEST(v[0].detail.find("while 3 were running, of at most 3") != std::string::npos, v[0].detail);
    // Once one has ended, a fourth fits.
    h.holds[3].acquired = 55 * ms;
    h.holds[3].ended = 60 * ms;
    BOOST_TEST(chaos::check_history(h, {}, 1).empty());
}

// The same shape for fences: A = [0, 100] fence 1, B = [10, 20] fence 3, C = [30, 40] fence 2.
// C began after B ended, with a smaller fence: reported against B, the largest fence of the
// holds that had ended, though A (fence 1, still running) is the one that ends last.
BOOST_AUTO_TEST_CASE(the_fence_sweep_compares_with_the_largest_fence_already_ended) {
    chaos::history h;
    h.holds = {hold("r", "A", 1, 0, 100 * ms, 200 * ms), hold("r", "B", 3, 10 * ms, 20 * ms, 200 * ms),
               hold("r", "C", 2, 30 * ms, 40 * ms, 200 * ms)};
    h.summaries = {clean_summary(0)};
    std::vector<chaos::violation> fences;
    for (auto& x : chaos::check_history(h, {}, 1))
        if (x.rule == "fence_order") fences.push_back(x);
    BOOST_TEST_REQUIRE(fences.size() == 1u);
    BOOST_TEST(fences[0].detail.find("fence 2 granted after a hold with fence 3") != std::string::npos,
               fences[0].detail);
}

// A validity that lies more than the ttl ahead of the moment it was read (the body's start or
// end), and a fenced hold without a fence, are reported; holds with an empty interval are not
// judged, and judged_holds says how many were.
BOOST_AUTO_TEST_CASE(a_validity_past_the_ttl_and_a_fenced_hold_without_a_fence_are_reported) {
    chaos::history h;
    h.holds = {hold("r", "a", 1, 10 * ms, 20 * ms, 50 * ms), hold("s", "b", 0, 10 * ms, 20 * ms, 50 * ms)};
    h.summaries = {clean_summary(0)};
    h.holds[0].granted_until = h.holds[0].acquired + 1000 * ms;  // exactly the ttl: allowed
    h.holds[1].valid_until = h.holds[1].ended + 1000 * ms;
    BOOST_TEST(chaos::check_history(h, {}, 1).empty());
    h.holds[0].granted_until += ms;
    h.holds[1].valid_until += ms;
    h.holds[1].kind = "fenced_fair";
    const auto v = chaos::check_history(h, {}, 1);
    BOOST_TEST(
        (rules(v) == std::vector<std::string>{"validity_too_long", "validity_too_long", "fence_missing"}));
    BOOST_TEST(v.at(0).detail.find("valid for 1001 ms from the moment it was read, with a ttl of 1000 ms") !=
                   std::string::npos,
               v.at(0).detail);

    BOOST_TEST(chaos::judged_holds(h) == 2u);
    h.holds[1].valid_until = h.holds[1].acquired;  // valid until the moment it was granted
    BOOST_TEST(chaos::judged_holds(h) == 1u);
}

// A grant's validity below what its ttl promises from the call is reported: it would shrink
// the hold and hide its overlaps. Records without a promise are not judged by it.
BOOST_AUTO_TEST_CASE(a_validity_shorter_than_the_ttl_promises_is_reported) {
    chaos::history h;
    h.holds = {hold("r", "a", 1, 10 * ms, 20 * ms, 50 * ms), hold("s", "b", 0, 10 * ms, 20 * ms, 50 * ms)};
    h.summaries = {clean_summary(0)};
    for (auto& x : h.holds) {
        x.promised_ms = 988;  // a 1000 ms ttl less 1 % and 2 ms
        x.granted_until = x.invoked + 988 * ms;
    }
    BOOST_TEST(chaos::check_history(h, {}, 1).empty());
    h.holds[1].granted_until -= 1;
    auto v = chaos::check_history(h, {}, 1);
    BOOST_TEST(rules(v) == std::vector<std::string>{"validity_too_short"});
    BOOST_TEST(v.at(0).detail.find("s: granted a validity of 987 ms from the call, of the 988 ms") !=
                   std::string::npos,
               v.at(0).detail);
    h.holds[1].promised_ms = 0;
    BOOST_TEST(chaos::check_history(h, {}, 1).empty());
}

// A hold granted by fewer distinct nodes than its quorum is reported, whether or not a rival
// overlapped it; a node named twice, or an item that is not a node, does not count.
BOOST_AUTO_TEST_CASE(a_grant_by_fewer_nodes_than_a_quorum_is_reported) {
    chaos::history h;
    h.holds = {hold("r", "a", 0, 0, 10 * ms, 50 * ms), hold("s", "b", 0, 0, 10 * ms, 50 * ms),
               hold("t", "c", 0, 0, 10 * ms, 50 * ms)};
    h.summaries = {clean_summary(0)};
    h.holds[0].granted = "0,2,4";
    h.holds[0].quorum = 3;
    h.holds[1].granted = "0 via 127.0.0.1:6379";
    h.holds[1].quorum = 1;
    h.holds[2].granted = "";  // not recorded: quorum 0
    BOOST_TEST(chaos::check_history(h, {}, 1).empty());
    for (const char* fewer : {"0,2", "0,2,2", "0,x,4", "0,2,", "0,-1,4", "0,2 via 3,4", ""}) {
        h.holds[0].granted = fewer;
        const auto v = chaos::check_history(h, {}, 1);
        BOOST_TEST(rules(v) == std::vector<std::string>{"grant_without_quorum"}, fewer);
        BOOST_TEST(v.at(0).detail.find("of a quorum of 3") != std::string::npos, v.at(0).detail);
    }
    h.holds[0].granted = "0,2,4";
    h.holds[1].quorum = 2;
    const auto v = chaos::check_history(h, {}, 1);
    BOOST_TEST(rules(v) == std::vector<std::string>{"grant_without_quorum"});
    BOOST_TEST(v.at(0).detail.find("s: a plain hold granted by 1 node(s)") != std::string::npos,
               v.at(0).detail);
}

// An overlap names the nodes that granted both holds (they forgot the first grant), or says
// that none did (the grants were not quorums that meet).
BOOST_AUTO_TEST_CASE(an_overlap_names_the_nodes_that_granted_both) {
    chaos::history h;
    h.holds = {hold("r", "a", 0, 0, 10 * ms, 50 * ms), hold("r", "b", 0, 9 * ms, 20 * ms, 60 * ms)};
    h.summaries = {clean_summary(0)};
    h.holds[0].granted = "0,1,2";
    h.holds[1].granted = "2,3,1";
    auto v = chaos::check_history(h, {}, 1);
    BOOST_TEST_REQUIRE(rules(v) == std::vector<std::string>{"mutual_exclusion"});
    BOOST_TEST(v[0].detail.find("granted by 0,1,2 and by 2,3,1: nodes 1,2 granted both") != std::string::npos,
               v[0].detail);
    h.holds[0].granted = "0 via 127.0.0.1:7000";
    h.holds[1].granted = "1";
    v = chaos::check_history(h, {}, 1);
    BOOST_TEST_REQUIRE(v.size() == 1u);
    BOOST_TEST(v[0].detail.find(": no node granted both") != std::string::npos, v[0].detail);
}

BOOST_AUTO_TEST_CASE(a_fence_that_goes_back_is_reported) {
    chaos::history h;
    h.holds = {hold("r", "a", 5, 0, 10 * ms, 50 * ms), hold("r", "b", 3, 11 * ms, 20 * ms, 60 * ms)};
    h.summaries = {clean_summary(0)};
    const auto v = chaos::check_history(h, {}, 1);
    BOOST_TEST(rules(v) == std::vector<std::string>{"fence_order"});
    BOOST_TEST(v[0].detail.find("fence 3") != std::string::npos);
    // Equal is as bad as smaller: two holds, one fence.
    h.holds[1].fence = 5;
    BOOST_TEST(rules(chaos::check_history(h, {}, 1)) == std::vector<std::string>{"fence_order"});
}

// One fence, two holds of one lineage: an owner of a reentrant lock re-entering what its
// release did not free, and a hold adopted from another. Of two lineages: a violation.
BOOST_AUTO_TEST_CASE(a_fence_shared_within_one_lineage_passes_and_across_two_is_reported) {
    chaos::history h;
    h.summaries = {clean_summary(0)};
    h.holds = {hold("r", "a", 5, 0, 10 * ms, 50 * ms), hold("r", "b", 5, 11 * ms, 20 * ms, 60 * ms)};
    for (auto& x : h.holds) {
        x.kind = "fenced_reentrant";
        x.worker = 1;
        x.coroutine = 2;
    }
    const std::map<std::string, std::vector<chaos::accepted_write>> store = {
        {"r", {{5, "a", ""}, {5, "b", ""}}}};
    BOOST_TEST(chaos::check_history(h, store, 1).empty());
    h.holds[1].coroutine = 3;  // another owner
    BOOST_TEST(rules(chaos::check_history(h, store, 1)) ==
               (std::vector<std::string>{"fence_order", "store_fences"}));

    h.holds = {hold("r", "a", 5, 0, 10 * ms, 50 * ms), hold("r", "b", 5, 11 * ms, 20 * ms, 60 * ms),
               hold("r", "c", 5, 21 * ms, 30 * ms, 60 * ms)};
    h.holds[1].handed_from = "a";
    h.holds[2].handed_from = "b";
    const std::map<std::string, std::vector<chaos::accepted_write>> handed = {
        {"r", {{5, "a", ""}, {5, "b", ""}, {5, "c", ""}}}};
    BOOST_TEST(chaos::check_history(h, handed, 1).empty());
    h.holds[2].handed_from = "elsewhere";
    BOOST_TEST(rules(chaos::check_history(h, handed, 1)) ==
               (std::vector<std::string>{"fence_order", "store_fences"}));

    // The lineage the workers record: it holds where the records that would show it are gone
    // (a worker killed before it wrote them), in the store's writes as in the holds.
    h.holds = {hold("r", "a", 5, 0, 10 * ms, 50 * ms), hold("r", "c", 5, 21 * ms, 30 * ms, 60 * ms)};
    h.holds[0].lineage = h.holds[1].lineage = "token a";
    const std::map<std::string, std::vector<chaos::accepted_write>> recorded = {
        {"r", {{5, "a", "token a"}, {5, "b", "token a"}, {5, "c", "token a"}}}};
    BOOST_TEST(chaos::check_history(h, recorded, 1).empty());
    h.holds[1].lineage = "token c";
    const std::map<std::string, std::vector<chaos::accepted_write>> two = {
        {"r", {{5, "a", "token a"}, {5, "b", "token b"}}}};
    BOOST_TEST(rules(chaos::check_history(h, two, 1)) ==
               (std::vector<std::string>{"fence_order", "store_fences"}));
}

BOOST_AUTO_TEST_CASE(a_re_entry_with_another_fence_is_reported) {
    chaos::history h;
    // {worker, resource, token, outer fence, inner fence, completed, outer valid until, error}
    h.reentries = {{0, "r", "a", 4, 4, 10 * ms, 20 * ms, ""},
                   {0, "r", "b", 6, 7, 10 * ms, 20 * ms, ""},
                   {0, "r", "c", 8, 0, 10 * ms, 20 * ms, "not_acquired"},
                   {0, "r", "d", 8, 9, 30 * ms, 20 * ms, ""}};  // after the outer lease ran out
    h.summaries = {clean_summary(0)};
    const auto v = chaos::check_history(h, {}, 1);
    BOOST_TEST(rules(v) == std::vector<std::string>{"reentry_fence"});
}

BOOST_AUTO_TEST_CASE(a_write_refused_while_its_lease_was_valid_is_reported) {
    chaos::history h;
    chaos::write_record late{0, "r", "a", 3, 10 * ms, 20 * ms, 15 * ms, false};  // completed after validity
    chaos::write_record valid{0, "r", "b", 4, 10 * ms, 12 * ms, 15 * ms, false};
    h.writes = {late, valid};
    h.summaries = {clean_summary(0)};
    BOOST_TEST(rules(chaos::check_history(h, {}, 1)) == std::vector<std::string>{"valid_write_refused"});
}

BOOST_AUTO_TEST_CASE(the_store_accepting_a_lower_or_shared_fence_is_reported) {
    chaos::history h;
    h.summaries = {clean_summary(0)};
    BOOST_TEST(rules(chaos::check_history(h, {{"r", {{2, "a", ""}, {1, "b", ""}}}}, 1)) ==
               std::vector<std::string>{"store_fences"});
    BOOST_TEST(rules(chaos::check_history(h, {{"r", {{2, "a", ""}, {2, "b", ""}}}}, 1)) ==
               std::vector<std::string>{"store_fences"});
}

BOOST_AUTO_TEST_CASE(a_running_watchdog_or_a_missing_worker_is_reported) {
    chaos::history h;
    auto s = clean_summary(0);
    s.watchdogs_running = 1;
    h.summaries = {s};
    BOOST_TEST(rules(chaos::check_history(h, {}, 2)) ==
               (std::vector<std::string>{"watchdog_stopped", "scopes_ended"}));
}

// A worker the harness killed on purpose (a restart as a fresh client) leaves no summary; the
// others must all leave one.
BOOST_AUTO_TEST_CASE(a_worker_killed_on_purpose_owes_no_summary) {
    chaos::history h;
    h.summaries = {clean_summary(0), clean_summary(2)};
    BOOST_TEST(chaos::check_history(h, {}, 3, {1}).empty());
    BOOST_TEST(rules(chaos::check_history(h, {}, 3, {2})) == (std::vector<std::string>{"scopes_ended"}));
}

BOOST_AUTO_TEST_CASE(a_history_file_reads_back_and_skips_a_torn_line) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("history_checker_test-" + std::to_string(::getpid()) + ".jsonl"))
                                 .string();
    {
        std::FILE* f = std::fopen(path.c_str(), "w");
        BOOST_TEST_REQUIRE(f != nullptr);
        std::fputs((chaos::to_json_line(hold("r", "a", 1, 0, 10 * ms, 50 * ms)) + "\n").c_str(), f);
        std::fputs((chaos::to_json_line(clean_summary(2)) + "\n").c_str(), f);
        std::fputs("{\"type\":\"hold\",\"wor", f);  // killed in the middle of a write
        std::fclose(f);
    }
    chaos::history h;
    std::size_t bad = 0;
    chaos::read_history_file(path, h, bad);
    std::remove(path.c_str());
    BOOST_TEST(bad == 1u);
    BOOST_TEST_REQUIRE(h.holds.size() == 1u);
    BOOST_TEST(h.holds[0].valid_until == 50 * ms);
    BOOST_TEST_REQUIRE(h.summaries.size() == 1u);
    BOOST_TEST(h.summaries[0].worker == 2);
}

BOOST_AUTO_TEST_SUITE_END()
