#include "lock/acquire_op.hpp"
#include "lock/client_state.hpp"
#include <redlock/client.hpp>
#include <redlock/error.hpp>

#include <boost/system/system_error.hpp>

namespace redlock {

namespace {

client_config validated(client_config cfg) {
    std::string why;
    if (auto ec = cfg.validate(why)) throw boost::system::system_error(ec, why);
    return cfg;
}

}  // namespace

client::client(executor_type ex, client_config cfg)
    : state_(std::make_shared<detail::client_state>(std::move(ex), validated(std::move(cfg)))) {}

client::~client() = default;

client::executor_type client::get_executor() const noexcept {
    return state_->executor();
}
const client_config& client::config() const noexcept {
    return state_->config();
}
std::size_t client::node_count() const noexcept {
    return state_->node_count();
}
metrics_snapshot client::metrics() const {
    return state_->metrics().snapshot();
}

void client::async_acquire_impl(std::string resource, lock_options options, diagnostics* diag,
                                acquire_handler h) {
    if (diag) diag->clear();
    detail::start_acquire(state_, std::move(resource), std::move(options), diag, std::move(h));
}

}  // namespace redlock
