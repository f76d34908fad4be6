// SPDX-License-Identifier: BSL-1.0
#include "redis/tls_setup.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>

#include <openssl/x509.h>

namespace redlock::redis::detail {

namespace asio = boost::asio;

std::unique_ptr<asio::ssl::context> make_tls_context(const tls_config& t, std::string& why) {
    auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    boost::system::error_code ec;
    ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                         asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                         asio::ssl::context::no_tlsv1_1,
                     ec);
    auto failed = [&](const std::string& what) {
        why = what + ": " + ec.message();
        return nullptr;
    };
    if (t.verify) {
        if (t.ca_file.empty()) {
            ctx->set_default_verify_paths(ec);
            if (ec) return failed("the system's CA paths");
        } else {
            ctx->load_verify_file(t.ca_file, ec);
            if (ec) return failed("tls.ca_file \"" + t.ca_file + "\"");
        }
        ctx->set_verify_mode(asio::ssl::verify_peer, ec);
    } else {
        ctx->set_verify_mode(asio::ssl::verify_none, ec);
    }
    if (!t.cert_file.empty()) {
        ctx->use_certificate_chain_file(t.cert_file, ec);
        if (ec) return failed("tls.cert_file \"" + t.cert_file + "\"");
        ctx->use_private_key_file(t.key_file, asio::ssl::context::pem, ec);
        if (ec) return failed("tls.key_file \"" + t.key_file + "\"");
    }
    return ctx;
}

std::string tls_peer_name(const tls_config& tls, const node_address& address) {
    return tls.server_name.empty() ? address.host : tls.server_name;
}

std::string tls_handshake_failure(const boost::system::error_code& ec, long verify_result, bool verify,
                                  const std::string& name) {
    std::string why = ec.message();
    if (verify && verify_result != X509_V_OK)
        why +=
            " (" + std::string(X509_verify_cert_error_string(verify_result)) + ", checking \"" + name + "\")";
    return why;
}

bool is_tls_refusal(const boost::system::error_code& ec) {
    return ec.category() == asio::error::get_ssl_category() || ec == asio::ssl::error::stream_truncated ||
           ec == asio::error::eof || ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
}

}  // namespace redlock::redis::detail
