// SPDX-License-Identifier: BSL-1.0
#include "topology_probe.hpp"

#include "node_connections.hpp"
#include "topology_replies.hpp"

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace redlock::cli {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// One question to one seed or sentinel, and its answer.
struct question {
    std::size_t voter = 0;
    std::string endpoint;
    std::string host;
    bool tls = false;
    resp::request request;
    std::unique_ptr<redis::connection> conn;
    bool answered = false;
    std::string error;
    std::vector<resp::value> replies;
};

constexpr auto answer_timeout = std::chrono::seconds(2);

void ask_all(const client_config& cfg, std::vector<question>& questions, asio::io_context& ioc) {
    const auto limit = cfg.connect_timeout + answer_timeout + std::chrono::seconds(1);
    for (auto& q : questions) {
        q.error = "no answer within " + std::to_string(limit.count()) + " ms";
        q.conn->async_connect([&q](error_code ec) {
            if (ec) {
                const auto& why = q.conn->last_error().message;
                q.error = why.empty() ? ec.message() : why;
                q.conn->close();
                return;
            }
            q.conn->async_exec(q.request, answer_timeout,
                               [&q](error_code ec2, std::vector<resp::value> replies) {
                                   if (ec2) {
                                       q.error = ec2.message();
                                   } else {
                                       q.answered = true;
                                       q.replies = std::move(replies);
                                   }
                                   q.conn->close();
                               });
        });
    }
    ioc.run_for(limit);
}

void read_cluster(const std::vector<question>& questions, std::size_t voter, cluster_report& c) {
    for (const auto& q : questions) {
        if (q.voter != voter) continue;
        if (!q.answered) {
            c.seed_errors.push_back(q.endpoint + ": " + q.error);
            continue;
        }
        std::string why;
        cluster_report scratch;
        auto& into = c.seed.empty() ? c : scratch;
        if (read_cluster_replies(q.replies, q.host, q.tls, into, why)) {
            if (&into == &c) c.seed = q.endpoint;
            continue;
        }
        c.seed_errors.push_back(q.endpoint + ": " + why);
        if (c.slots_error.empty()) c.slots_error = q.endpoint + ": " + why;
    }
}

void read_sentinels(const std::vector<question>& questions, std::size_t voter, sentinel_report& s) {
    for (const auto& q : questions) {
        if (q.voter != voter) continue;
        sentinel_answer a;
        a.endpoint = q.endpoint;
        if (q.answered)
            read_sentinel_replies(q.replies, a);
        else
            a.error = q.error;
        s.sentinels.push_back(std::move(a));
    }
    choose_master(s);
}

}  // namespace

std::vector<voter_report> probe_topologies(const client_config& cfg,
                                           const std::vector<redis::node_spec>& specs) {
    using topology = redis::node_spec::topology;
    asio::io_context ioc(1);
    std::vector<voter_report> voters;
    std::vector<question> questions;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const auto& spec = specs[i];
        switch (spec.kind) {
            case topology::server: {
                node_report r;
                r.name = spec.addresses.front().to_string();
                voters.emplace_back(std::move(r));
                break;
            }
            case topology::cluster: {
                cluster_report r;
                r.name = spec.to_string();
                voters.emplace_back(std::move(r));
                break;
            }
            case topology::sentinel: {
                sentinel_report r;
                r.name = spec.to_string();
                r.master_name = spec.master_name;
                voters.emplace_back(std::move(r));
                break;
            }
        }
        if (spec.kind == topology::server) continue;
        for (auto address : spec.addresses) {
            if (spec.kind == topology::sentinel) {
                // The URI's credentials and database are the master's; the sentinels' own come from
                // the node's object form (client_config::per_node), if at all, as the client's do.
                address.username = spec.sentinel_username;
                address.password = spec.sentinel_password;
                address.db = 0;
            }
            question q;
            q.voter = i;
            q.endpoint = endpoint(address.host, address.port);
            q.host = address.host;
            q.tls = address.kind == redis::node_address::transport::tls;
            q.request =
                spec.kind == topology::cluster ? cluster_request() : sentinel_request(spec.master_name);
            q.conn = make_connection(ioc.get_executor(), cfg, std::move(address));
            questions.push_back(std::move(q));
        }
    }
    if (questions.empty()) return voters;
    ask_all(cfg, questions, ioc);
    for (std::size_t i = 0; i < voters.size(); ++i) {
        if (auto* c = std::get_if<cluster_report>(&voters[i])) read_cluster(questions, i, *c);
        if (auto* s = std::get_if<sentinel_report>(&voters[i])) read_sentinels(questions, i, *s);
    }
    return voters;
}

}  // namespace redlock::cli
