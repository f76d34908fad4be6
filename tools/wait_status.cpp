// SPDX-License-Identifier: BSL-1.0
#include "wait_status.hpp"

#include "node_connections.hpp"
#include "redis/node_link.hpp"
#include <redlock/resp/request.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>

namespace redlock::cli {

namespace {
constexpr auto refresh = std::chrono::milliseconds(250);
}

client_config quarantine_news::telling(client_config cfg, const std::shared_ptr<quarantine_news>& news) {
    cfg.on_event = [news, own = std::move(cfg.on_event)](const event& e) {
        if (own) own(e);
        news->on_event(e, clock::now());
    };
    return cfg;
}

void quarantine_news::on_event(const event& e, clock::time_point now) {
    if (e.kind != event_kind::node_quarantined && e.kind != event_kind::node_voting) return;
    std::erase_if(running_, [&](const quarantine& q) { return q.node == e.node_name || q.until <= now; });
    if (e.kind == event_kind::node_quarantined)
        running_.push_back(
            {e.node_name, e.detail.find("failover quarantine") != std::string::npos, now + e.duration});
}

std::string quarantine_news::text(clock::time_point now) const {
    const quarantine* first = nullptr;
    std::size_t running = 0;
    for (const auto& q : running_) {
        if (q.until <= now) continue;
        ++running;
        if (first == nullptr || q.until < first->until) first = &q;
    }
    if (first == nullptr) return {};
    const auto left = std::chrono::ceil<std::chrono::seconds>(first->until - now).count();
    auto s = "node " + first->node + ": " + (first->failover ? "failover" : "restart") +
             " quarantine, votes in " + std::to_string(left) + "s";
    if (running > 1) s += " (" + std::to_string(running - 1) + " more quarantined)";
    return s;
}

wait_status::wait_status(const boost::asio::any_io_executor& ex, const client_config& cfg,
                         std::string resource, std::shared_ptr<const quarantine_news> news)
    : nodes_(open_node_links(redis::detail::make_serial(ex), cfg)),
      resource_(std::move(resource)),
      key_(lock_key_of(cfg, resource_)),
      timer_(ex),
      pttls_(nodes_.size(), -2),
      news_(std::move(news)) {}

wait_status::~wait_status() = default;

void wait_status::start() {
    running_ = true;
    started_ = std::chrono::steady_clock::now();
    tick();
}

void wait_status::stop() {
    if (!running_) return;
    running_ = false;
    timer_.cancel();
    for (auto& n : nodes_)
        n->close();
    if (drawn_) std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
}

std::int64_t wait_status::quorum_time_left(std::vector<std::int64_t> pttls) {
    const std::size_t quorum = pttls.size() / 2 + 1;
    // No expiry (-1) outlasts every ttl.
    for (auto& p : pttls)
        if (p == -1) p = no_expiry;
    std::sort(pttls.begin(), pttls.end(), std::greater<>());
    return pttls.size() >= quorum ? pttls[quorum - 1] : -2;
}

void wait_status::tick() {
    if (!running_) return;
    resp::request req;
    req.push("PTTL", key_);
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        nodes_[i]->exec(
            key_, req, refresh, [this, i](boost::system::error_code ec, std::vector<resp::value> r) {
                if (!running_) return;
                pttls_[i] = !ec && r.size() == 1 && r[0].kind == resp::type::integer ? r[0].integer : -2;
            });
    }
    draw();
    timer_.expires_after(refresh);
    timer_.async_wait([this](boost::system::error_code ec) {
        if (!ec) tick();
    });
}

void wait_status::draw() {
    const auto waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const auto left = quorum_time_left(pttls_);
    char line[200];
    if (left == no_expiry) {
        std::snprintf(line, sizeof line, "waited %.1fs for \"%s\"; the holder's key has no expiry", waited,
                      resource_.c_str());
    } else if (left >= 0) {
        std::snprintf(line, sizeof line, "waited %.1fs for \"%s\"; the holder's lease has %.1fs left", waited,
                      resource_.c_str(), static_cast<double>(left) / 1000.0);
    } else {
        std::snprintf(line, sizeof line, "waited %.1fs for \"%s\"", waited, resource_.c_str());
    }
    const auto news = news_ ? news_->text(std::chrono::steady_clock::now()) : std::string();
    std::fprintf(stderr, "\r\033[Kredlock: %s%s%s", line, news.empty() ? "" : "; ", news.c_str());
    std::fflush(stderr);
    drawn_ = true;
}

}  // namespace redlock::cli
