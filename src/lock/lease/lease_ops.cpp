// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/lease_ops.hpp"

#include "detail/completion.hpp"
#include "lock/lease/lease_rounds.hpp"
#include <redlock/error.hpp>

#include <boost/asio/post.hpp>

#include <string>

namespace redlock::detail {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::milliseconds;

template <class Round>
void launch(std::shared_ptr<Round> round, const client_state& client) {
    round->connect_cancellation();
    asio::post(client.strand(), [round] { round->start(); });
}

}  // namespace

void start_extend(std::shared_ptr<lease_state> state, milliseconds ttl, diagnostics* diag,
                  lease_handler handler) {
    auto client = state->client;
    if (ttl <= milliseconds::zero() || ttl > client->config().max_ttl) {
        if (diag) {
            diag->clear();
            diag->message = "extend \"" + state->resource + "\": ttl " + std::to_string(ttl.count()) +
                            " ms is not in (0, " + std::to_string(client->config().max_ttl.count()) + "] ms";
        }
        complete_refused(client->executor(), std::move(handler), error::invalid_ttl);
        return;
    }
    const auto id = state->fsm.next_extend_id();
    launch(std::make_shared<extend_round>(std::move(state), id, ttl, diag, std::move(handler)), *client);
}

void start_release(std::shared_ptr<lease_state> state, diagnostics* diag, lease_handler handler) {
    auto client = state->client;
    launch(std::make_shared<release_round>(std::move(state), "release", diag, std::move(handler)), *client);
}

void start_check(std::shared_ptr<lease_state> state, diagnostics* diag, lease_handler handler) {
    auto client = state->client;
    launch(std::make_shared<check_round>(std::move(state), "check", diag, std::move(handler)), *client);
}

void complete_refused(const asio::any_io_executor& ex, lease_handler handler, error_code ec) {
    // Never complete inside the initiating function: post, then deliver on the handler's executor.
    asio::post(ex, [h = std::move(handler), ex, ec]() mutable {
        complete_on_handler_executor(std::move(h), ex, ec);
    });
}

}  // namespace redlock::detail
