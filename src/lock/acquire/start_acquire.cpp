// SPDX-License-Identifier: BSL-1.0
#include "lock/acquire/start_acquire.hpp"

#include "lock/acquire/acquire_op.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>

namespace redlock::detail {

void start_acquire(std::shared_ptr<client_state> client, std::string resource, lock_options options,
                   diagnostics* diag, acquire_handler handler) {
    auto strand = client->strand();
    auto op = std::make_shared<acquire_op>(std::move(client), std::move(resource), std::move(options), diag,
                                           std::move(handler));
    op->connect_cancellation();
    boost::asio::post(strand, [op] { op->start(); });
}

void start_acquire_all(std::shared_ptr<client_state> client, std::vector<std::string> resources,
                       lock_options options, diagnostics* diag, acquire_handler handler) {
    // One order for every caller: the lease's names, its messages and the scripts' keys.
    std::sort(resources.begin(), resources.end());
    resources.erase(std::unique(resources.begin(), resources.end()), resources.end());
    if (resources.size() == 1) {
        start_acquire(std::move(client), std::move(resources.front()), std::move(options), diag,
                      std::move(handler));
        return;
    }
    std::string names;
    for (const auto& r : resources) {
        if (!names.empty()) names += ", ";
        names += r;
    }
    auto strand = client->strand();
    auto op = std::make_shared<acquire_op>(std::move(client), std::move(names), std::move(options), diag,
                                           std::move(handler), std::move(resources));
    op->connect_cancellation();
    boost::asio::post(strand, [op] { op->start(); });
}

}  // namespace redlock::detail
