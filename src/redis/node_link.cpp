#include "redis/node_link.hpp"

#include "redis/script_call.hpp"

#include <boost/asio/dispatch.hpp>

namespace redlock::redis::detail {

node_link::node_link(strand_type strand, const node_spec& spec, const config_for& make_config,
                     cluster_link::new_master_fn on_new_master)
    : strand_(std::move(strand)), subscriber_config_(make_config(spec.addresses.front())) {
    if (spec.kind == node_spec::topology::cluster) {
        cluster_ =
            std::make_shared<cluster_link>(strand_, spec.addresses, make_config, std::move(on_new_master));
    } else {
        server_ = std::make_unique<connection>(strand_, subscriber_config_);
    }
}

node_link::~node_link() {
    close();
}

void node_link::start() {
    if (server_) {
        server_->async_connect([](error_code) {});
        return;
    }
    boost::asio::dispatch(strand_, [cluster = cluster_] { cluster->start(); });
}

void node_link::close() {
    if (server_) {
        server_->close();
        return;
    }
    boost::asio::dispatch(strand_, [cluster = cluster_] { cluster->close(); });
}

bool node_link::is_connected() const {
    return server_ ? server_->is_connected() : cluster_->is_connected();
}

connection_error node_link::last_error() const {
    return server_ ? server_->last_error() : cluster_->last_error();
}

void node_link::exec_routed(std::uint16_t slot, std::string payload, std::size_t commands,
                            std::chrono::milliseconds timeout, cluster_link::exec_handler h) {
    boost::asio::dispatch(strand_, [cluster = cluster_, slot, payload = std::move(payload), commands, timeout,
                                    h = std::move(h)]() mutable {
        cluster->exec(slot, std::move(payload), commands, timeout, std::move(h));
    });
}

void node_link::eval_routed(std::uint16_t slot, const script& s, std::span<const std::string_view> keys,
                            std::span<const std::string_view> args, std::chrono::milliseconds timeout,
                            cluster_link::eval_handler h) {
    boost::asio::dispatch(strand_, [cluster = cluster_, slot, s, evalsha = evalsha_payload(s, keys, args),
                                    timeout, h = std::move(h)]() mutable {
        cluster->eval(slot, s, std::move(evalsha), timeout, std::move(h));
    });
}

}  // namespace redlock::redis::detail
