// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/extend_batcher.hpp"

#include "lock/client/client_state.hpp"
#include "redis/cluster_slot.hpp"
#include "scripts/scripts_gen.hpp"
#include <redlock/error.hpp>

#include <algorithm>
#include <string_view>

namespace redlock::detail {

using boost::system::error_code;

extend_batcher::extend_batcher(client_state& client, std::size_t nodes)
    : client_(client), queues_(nodes), timer_(client.strand()) {}

void extend_batcher::add(std::size_t node, std::string key, std::string token, std::string ttl_text,
                         std::chrono::milliseconds timeout, reply_fn on_reply) {
    queues_[node].push_back(
        {std::move(key), std::move(token), std::move(ttl_text), timeout, std::move(on_reply)});
    if (armed_) return;
    armed_ = true;
    timer_.expires_after(window);
    timer_.async_wait([self = client_.shared_from_this(), this](error_code) { flush(); });
}

void extend_batcher::drop_all() noexcept {
    armed_ = false;
    for (auto& queue : queues_) {
        // Taken out before they die: an entry's destructor may reach back into the client.
        auto dropped = std::move(queue);
        queue.clear();
    }
}

void extend_batcher::flush() {
    armed_ = false;
    for (std::size_t node = 0; node < queues_.size(); ++node) {
        auto queue = std::move(queues_[node]);
        queues_[node].clear();
        if (queue.empty()) continue;
        // A cluster runs a script on keys of one slot only (else CROSSSLOT): a batch per slot.
        if (client_.link(node).routes_by_slot()) {
            std::stable_sort(queue.begin(), queue.end(), [](const entry& a, const entry& b) {
                return redis::detail::key_slot(a.key) < redis::detail::key_slot(b.key);
            });
        }
        std::size_t first = 0;
        while (first < queue.size()) {
            auto last = first + 1;
            const auto slot =
                client_.link(node).routes_by_slot() ? redis::detail::key_slot(queue[first].key) : 0;
            while (last < queue.size() && last - first < max_batch &&
                   (!client_.link(node).routes_by_slot() || redis::detail::key_slot(queue[last].key) == slot))
                ++last;
            send(node, std::span<entry>(queue).subspan(first, last - first));
            first = last;
        }
    }
}

void extend_batcher::send(std::size_t node, std::span<entry> batch) {
    if (batch.size() == 1) {
        auto& e = batch.front();
        std::string_view keys[] = {e.key};
        std::string_view args[] = {e.token, e.ttl_text};
        client_.eval_on(node, scripts::extend, keys, args, e.timeout, std::move(e.on_reply));
        return;
    }
    send_batch(node, batch);
}

void extend_batcher::send_batch(std::size_t node, std::span<entry> batch) {
    std::vector<std::string_view> keys;
    std::vector<std::string_view> args;
    keys.reserve(batch.size());
    args.reserve(2 * batch.size());
    auto timeout = batch.front().timeout;
    // Kept whole (the strings the views above point into, too): a TRYAGAIN sends each again.
    auto entries = std::make_shared<std::vector<entry>>();
    entries->reserve(batch.size());
    for (auto& e : batch) {
        entries->push_back(std::move(e));
        keys.push_back(entries->back().key);
        args.push_back(entries->back().token);
        args.push_back(entries->back().ttl_text);
        timeout = std::min(timeout, entries->back().timeout);
    }
    const auto sent_at = std::chrono::steady_clock::now();
    // A slot being migrated serves a script only if it has every one of its keys, or none
    // (then: ASK): a batch whose keys are split between the two nodes is refused with TRYAGAIN
    // until the migration ends, which may take longer than the leases have, or never come if
    // the migration stalls. Each extend alone is served at once.
    const auto tryagain = client_.link(node).routes_by_slot()
                              ? redis::detail::cluster_link::on_tryagain::hand_back
                              : redis::detail::cluster_link::on_tryagain::retry;
    client_.eval_on(
        node, scripts::extend_batch, keys, args, timeout,
        [this, self = client_.shared_from_this(), node, entries, sent_at](error_code ec, resp::value v) {
            if (ec && v.error_code() == "TRYAGAIN") return split(node, *entries, sent_at, v);
            const bool well_formed = v.kind == resp::type::array && v.elements.size() == entries->size();
            if (!ec && !well_formed) ec = error::unexpected_reply;
            for (std::size_t i = 0; i < entries->size(); ++i) {
                auto& on_reply = (*entries)[i].on_reply;
                if (!on_reply) continue;
                if (ec) {
                    on_reply(ec, v.is_error() ? v : resp::value{});
                } else {
                    on_reply(ec, std::move(v.elements[i]));
                }
            }
        },
        tryagain);
}

void extend_batcher::split(std::size_t node, std::vector<entry>& batch,
                           std::chrono::steady_clock::time_point sent_at, const resp::value& tryagain) {
    const auto spent =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - sent_at);
    for (auto& e : batch) {
        if (!e.on_reply) continue;
        if (e.timeout > e.timeout.zero() && spent >= e.timeout) {
            e.on_reply(error::server_error, tryagain);
            continue;
        }
        const auto left = e.timeout > e.timeout.zero() ? e.timeout - spent : e.timeout;
        std::string_view keys[] = {e.key};
        std::string_view args[] = {e.token, e.ttl_text};
        client_.eval_on(node, scripts::extend, keys, args, left, std::move(e.on_reply));
    }
}

}  // namespace redlock::detail
