// SPDX-License-Identifier: BSL-1.0
#include "redis/node_link.hpp"

#include "redis/script_call.hpp"
#include <redlock/resp/request.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>

namespace redlock::redis::detail {

node_link::node_link(strand_type strand, const node_spec& spec, const config_for& make_config,
                     cluster_link::new_master_fn on_new_master, cluster_link::redirect_fn on_redirect)
    : strand_(std::move(strand)), subscriber_config_(make_config(spec.addresses.front())) {
    // The client validated the map (client_config's checks).
    address_map remap;
    std::string why;
    (void)address_map::parse(spec.address_map, remap, why);
    if (spec.kind == node_spec::topology::cluster) {
        cluster_ =
            std::make_shared<cluster_link>(strand_, spec.addresses, make_config, std::move(on_new_master),
                                           std::move(on_redirect), std::move(remap));
        return;
    }
    if (spec.kind == node_spec::topology::sentinel) {
        // The URI's credentials and database are the master's; the sentinels' own come from
        // the configuration's object form of the node, if at all.
        auto sentinels = spec.addresses;
        for (auto& a : sentinels) {
            a.username = spec.sentinel_username;
            a.password = spec.sentinel_password;
            a.db = 0;
        }
        sentinels_ =
            std::make_shared<sentinel_locator>(strand_, std::move(sentinels), spec.master_name,
                                               spec.addresses.front(), subscriber_config_, std::move(remap));
        subscriber_config_.locate = sentinels_->hook();
        subscriber_config_.require_master = true;
        on_new_master_ = std::move(on_new_master);
    }
    server_ = std::make_shared<connection>(strand_, subscriber_config_);
}

node_link::~node_link() {
    close();
}

void node_link::start() {
    if (sentinels_) {
        // Started before the connection, whose first attempt asks it.
        boost::asio::dispatch(strand_, [sentinels = sentinels_, server = std::weak_ptr<connection>(server_),
                                        on_new_master = on_new_master_] {
            sentinels->on_switch([server, on_new_master](const node_address& master) {
                if (on_new_master) on_new_master(master, nullptr);
                if (auto s = server.lock()) s->reconnect();
            });
            sentinels->start();
        });
    }
    if (server_) {
        server_->async_connect([](error_code) {});
        return;
    }
    boost::asio::dispatch(strand_, [cluster = cluster_] { cluster->start(); });
}

void node_link::close() {
    if (sentinels_) boost::asio::dispatch(strand_, [sentinels = sentinels_] { sentinels->close(); });
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

void node_link::drain(std::chrono::milliseconds timeout, cluster_link::drained_fn on_drained) {
    if (server_) {
        resp::request ping;
        ping.push("PING");
        server_->async_exec(
            ping, timeout,
            boost::asio::bind_executor(strand_, [on_drained = std::move(on_drained)](
                                                    error_code, std::vector<resp::value>) { on_drained(); }));
        return;
    }
    boost::asio::dispatch(strand_,
                          [cluster = cluster_, timeout, on_drained = std::move(on_drained)]() mutable {
                              cluster->drain(timeout, std::move(on_drained));
                          });
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
                            cluster_link::eval_handler h, cluster_link::on_tryagain tryagain) {
    boost::asio::dispatch(strand_, [cluster = cluster_, slot, s, evalsha = evalsha_payload(s, keys, args),
                                    timeout, h = std::move(h), tryagain]() mutable {
        cluster->eval(slot, s, std::move(evalsha), timeout, std::move(h), tryagain);
    });
}

void node_link::eval_then(const script& s, std::span<const std::string_view> keys,
                          std::span<const std::string_view> args, const resp::request& trailer,
                          std::chrono::milliseconds timeout, cluster_link::exec_handler h) {
    auto evalsha = evalsha_payload(s, keys, args);
    if (!server_) {
        boost::asio::dispatch(
            strand_, [cluster = cluster_, slot = keys.empty() ? std::uint16_t{0} : key_slot(keys.front()), s,
                      evalsha = std::move(evalsha), trailer = trailer.payload(), commands = trailer.size(),
                      timeout, h = std::move(h)]() mutable {
                cluster->eval_then(slot, s, std::move(evalsha), std::move(trailer), commands, timeout,
                                   std::move(h));
            });
        return;
    }
    // After a NOSCRIPT the script goes again as EVAL, with the trailer behind it again: the
    // first trailer answered for a write that did not happen.
    struct step {
        std::shared_ptr<connection> server;
        script s;
        std::string evalsha;  // kept for the NOSCRIPT fallback; empty once it was used
        std::string trailer;
        std::size_t commands;
        std::chrono::milliseconds timeout;
        cluster_link::exec_handler handler;

        using cancellation_slot_type = boost::asio::cancellation_slot;
        cancellation_slot_type get_cancellation_slot() const noexcept {
            return handler.get_cancellation_slot();
        }
        using executor_type = boost::asio::any_completion_executor;
        executor_type get_executor() const noexcept {
            return boost::asio::get_associated_executor(handler, server->get_executor());
        }

        void operator()(error_code ec, std::vector<resp::value> replies) {
            if (!ec && !evalsha.empty() && !replies.empty() && lacks_script(replies.front())) {
                auto again = eval_payload(s, evalsha) + trailer;
                evalsha.clear();
                auto target = server;
                target->async_exec_encoded(std::move(again), commands, timeout, std::move(*this));
                return;
            }
            std::move(handler)(ec, std::move(replies));
        }
    };
    auto first = evalsha + trailer.payload();
    server_->async_exec_encoded(
        std::move(first), 1 + trailer.size(), timeout,
        step{server_, s, std::move(evalsha), trailer.payload(), 1 + trailer.size(), timeout, std::move(h)});
}

}  // namespace redlock::redis::detail
