// SPDX-License-Identifier: BSL-1.0
#include "redis/sentinel_locator.hpp"

#include <redlock/error.hpp>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>

#include <algorithm>
#include <charconv>
#include <sstream>
#include <utility>

namespace redlock::redis::detail {

namespace {

constexpr std::string_view switch_channel = "+switch-master";

std::optional<unsigned short> read_port(std::string_view text) {
    unsigned value = 0;
    const auto* end = text.data() + text.size();
    const auto [last, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || last != end || value == 0 || value > 65535) return std::nullopt;
    return static_cast<unsigned short>(value);
}

node_address at(const node_address& like, std::string host, unsigned short port) {
    node_address a = like;
    a.host = std::move(host);
    a.port = port;
    return a;
}

}  // namespace

std::optional<node_address> read_master_addr(const resp::value& reply, const node_address& like,
                                             std::string& why) {
    if (reply.is_null()) {
        why = "knows no master by that name";
        return std::nullopt;
    }
    if (reply.is_error()) {
        why = "answered " + reply.str;
        return std::nullopt;
    }
    const auto& e = reply.elements;
    const bool pair = reply.kind == resp::type::array && e.size() == 2 && !e[0].str.empty();
    const auto port = pair ? read_port(e[1].str) : std::nullopt;
    if (!port) {
        why = "answered " + resp::to_string(reply) + ", not [host, port]";
        return std::nullopt;
    }
    return at(like, e[0].str, *port);
}

std::optional<node_address> read_switch_master(const resp::value& push, std::string_view master_name,
                                               const node_address& like) {
    const auto& e = push.elements;
    if (e.size() != 3 || e[0].str != "message" || e[1].str != switch_channel) return std::nullopt;
    std::istringstream fields(e[2].str);
    std::string name, old_host, old_port, new_host, new_port, extra;
    if (!(fields >> name >> old_host >> old_port >> new_host >> new_port) || (fields >> extra))
        return std::nullopt;
    if (name != master_name) return std::nullopt;
    const auto port = read_port(new_port);
    if (!port) return std::nullopt;
    return at(like, std::move(new_host), *port);
}

struct sentinel_locator::attempt {
    explicit attempt(connection_config::locate_handler h, std::size_t asked)
        : handler(std::in_place, std::move(h)), pending(asked) {}

    // Boost 1.81's any_completion_handler cannot be move-assigned (see cluster_link): it is
    // made in place and handed on by move construction.
    std::optional<connection_config::locate_handler> handler;
    std::size_t pending;
    std::vector<std::pair<node_address, std::size_t>> named;  // each master named, by how many
    std::string said;  // what each sentinel answered that was no master, for the error
};

sentinel_locator::sentinel_locator(strand_type strand, std::vector<node_address> sentinels,
                                   std::string master_name, node_address master_like,
                                   connection_config sentinel_config, address_map remap)
    : strand_(std::move(strand)),
      sentinel_addresses_(std::move(sentinels)),
      master_name_(std::move(master_name)),
      master_like_(std::move(master_like)),
      remap_(std::move(remap)) {
    sentinel_config.scripts.clear();
    sentinel_config.setup_commands.clear();
    sentinel_config.on_setup_replies = nullptr;
    sentinel_config.on_server_info = nullptr;
    sentinel_config.on_connect = nullptr;
    sentinel_config.on_disconnect = nullptr;  // the voter's own, not its sentinels'
    sentinel_config.locate = nullptr;
    sentinel_config.require_master = false;
    sentinel_config.min_server_version.clear();
    // Two connections per sentinel: queries, and the subscription (a RESP2 connection that
    // subscribed takes no other command).
    for (const auto& address : sentinel_addresses_) {
        auto cfg = sentinel_config;
        cfg.address = address;
        sentinels_.push_back(std::make_unique<connection>(strand_, cfg));
    }
    sentinel_config_ = std::move(sentinel_config);
}

sentinel_locator::~sentinel_locator() {
    close();
}

void sentinel_locator::start() {
    std::weak_ptr<sentinel_locator> weak = weak_from_this();
    for (std::size_t i = 0; i < sentinel_addresses_.size(); ++i) {
        sentinels_[i]->async_connect([](error_code) {});
        auto cfg = sentinel_config_;
        cfg.address = sentinel_addresses_[i];
        if (!cfg.client_name.empty()) cfg.client_name += ":sub";
        cfg.on_push = [weak](const resp::value& v) {
            if (auto self = weak.lock()) self->on_push(v);
        };
        // After every (re)connect the sentinel has forgotten the subscription.
        cfg.on_connect = [weak, i] {
            if (auto self = weak.lock()) self->subscribe(i);
        };
        subscriptions_.push_back(std::make_unique<connection>(strand_, std::move(cfg)));
        subscriptions_.back()->async_connect([](error_code) {});
    }
}

void sentinel_locator::subscribe(std::size_t sentinel) {
    if (closed_ || sentinel >= subscriptions_.size()) return;
    resp::request req;
    req.push("SUBSCRIBE", switch_channel);
    // A refusal (an ACL without +subscribe) leaves locate() working, only slower to follow.
    subscriptions_[sentinel]->send_subscription(req, "subscribe", 1, [](const resp::value&) {});
}

void sentinel_locator::close() {
    closed_ = true;
    on_switch_.clear();
    for (auto& c : sentinels_)
        c->close();
    for (auto& c : subscriptions_)
        c->close();
}

std::function<void(std::chrono::milliseconds, connection_config::locate_handler)> sentinel_locator::hook() {
    return [weak = weak_from_this()](std::chrono::milliseconds budget, connection_config::locate_handler h) {
        if (auto self = weak.lock()) {
            self->locate(budget, std::move(h));
            return;
        }
        auto ex = boost::asio::get_associated_executor(h);
        boost::asio::dispatch(ex, [h = std::move(h)]() mutable {
            std::move(h)(error::connection_closed, node_address{}, "the client is closed");
        });
    };
}

void sentinel_locator::locate(std::chrono::milliseconds budget, connection_config::locate_handler handler) {
    boost::asio::dispatch(strand_, [self = shared_from_this(), budget, h = std::move(handler)]() mutable {
        self->ask_all(budget, std::move(h));
    });
}

void sentinel_locator::ask_all(std::chrono::milliseconds budget, connection_config::locate_handler handler) {
    auto a = std::make_shared<attempt>(std::move(handler), sentinels_.size());
    resp::request req;
    req.push("SENTINEL", "GET-MASTER-ADDR-BY-NAME", master_name_);
    for (std::size_t i = 0; i < sentinels_.size(); ++i) {
        sentinels_[i]->async_exec(
            req, budget, [self = shared_from_this(), a, i](error_code ec, std::vector<resp::value> replies) {
                self->on_answer(a, i, ec, std::move(replies));
            });
    }
}

void sentinel_locator::on_answer(const std::shared_ptr<attempt>& a, std::size_t sentinel, error_code ec,
                                 std::vector<resp::value> replies) {
    --a->pending;
    if (!a->handler) return;  // decided already
    std::string why;
    std::optional<node_address> master;
    if (ec) {
        const auto last = sentinels_[sentinel]->last_error();
        why = last.message.empty() ? ec.message() : last.message;
    } else {
        master = read_master_addr(replies.front(), master_like_, why);
        if (master) master = remap_.apply(std::move(*master));
    }
    if (master) {
        auto known =
            std::find_if(a->named.begin(), a->named.end(), [&](const auto& n) { return n.first == *master; });
        if (known == a->named.end()) known = a->named.insert(a->named.end(), {*master, 0});
        ++known->second;
    } else {
        a->said += (a->said.empty() ? "" : "; ") + sentinel_addresses_[sentinel].to_string() + " " + why;
    }
    // A sentinel that has not heard of a failover yet still names the old master: the answer of
    // a majority of the sentinels decides, or, once all have answered, the most named.
    const auto majority = sentinels_.size() / 2 + 1;
    const auto most = std::max_element(a->named.begin(), a->named.end(),
                                       [](const auto& x, const auto& y) { return x.second < y.second; });
    const bool decided = most != a->named.end() && (most->second >= majority || a->pending == 0);
    if (!decided && a->pending > 0) return;
    connection_config::locate_handler h(std::move(*a->handler));
    a->handler.reset();
    auto ex = boost::asio::get_associated_executor(h, strand_);
    error_code result;
    node_address where;
    std::string message;
    if (decided) {
        where = most->first;
        remember(where);
    } else {
        result = error::master_not_found;
        message = "no sentinel named a master for '" + master_name_ + "': " + a->said;
    }
    boost::asio::dispatch(
        ex, [h = std::move(h), result, where = std::move(where), message = std::move(message)]() mutable {
            std::move(h)(result, std::move(where), std::move(message));
        });
}

void sentinel_locator::on_push(const resp::value& push) {
    if (closed_) return;
    if (auto master = read_switch_master(push, master_name_, master_like_))
        remember(remap_.apply(std::move(*master)));
}

void sentinel_locator::remember(const node_address& master) {
    {
        std::lock_guard lock(status_mutex_);
        if (last_master_ == master) return;
        const bool first = !last_master_;
        last_master_ = master;
        if (first) return;
        ++switches_;
    }
    for (const auto& f : on_switch_)
        f(master);
}

std::optional<node_address> sentinel_locator::last_master() const {
    std::lock_guard lock(status_mutex_);
    return last_master_;
}

std::uint64_t sentinel_locator::switches() const {
    std::lock_guard lock(status_mutex_);
    return switches_;
}

}  // namespace redlock::redis::detail
