// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_DIAGNOSTICS_HPP
#define REDLOCK_DIAGNOSTICS_HPP

#include <redlock/export.hpp>

#include <boost/system/error_code.hpp>

#include <string>
#include <vector>

namespace redlock {

/// What one node answered in the last round of a lock operation.
struct REDLOCK_API node_outcome {
    enum class verdict {
        granted,  ///< the node holds our token (acquire, extend) or deleted it (release)
        denied,   ///< another owner holds the key, or our key is gone
        failed,   ///< timeout, lost reply, connection error or server error: see `error`
        pending,  ///< no answer yet when the operation was decided
    };
    std::string node;  ///< the node's URI without password
    verdict result = verdict::pending;
    boost::system::error_code error;  ///< for `failed`
    std::string detail;               ///< the server's error text, if any
};

/// Filled by the operations that take one: why the last round of the operation ended the way it
/// did, per node. `message` names the resource and the nodes involved.
struct REDLOCK_API diagnostics {
    std::string message;
    std::vector<node_outcome> nodes;
    unsigned attempts = 0;  ///< acquire rounds run

    void clear() {
        message.clear();
        nodes.clear();
        attempts = 0;
    }
};

}  // namespace redlock

#endif
