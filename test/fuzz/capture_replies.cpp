// SPDX-License-Identifier: BSL-1.0
// capture_replies OUT_DIR: seeds for the RESP fuzzer from a real redis-server. Starts one (the
// test fixture), sends a list of commands over a plain socket in RESP2 and in RESP3 (HELLO 3),
// and writes the raw bytes of each reply to OUT_DIR/real_<protocol>_<n>_<command>, plus each
// protocol's whole stream as one pipelined input. Our parser only finds where a reply ends;
// the bytes are the server's. test/fuzz/run.cmake runs it before every fuzz run, so the
// corpus always starts from what this redis-server version really sends.
#include "resp/reply_parser.hpp"
#include "support/redis_server.hpp"
#include <redlock/resp/request.hpp>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace {

using redlock::resp::reply_parser;
using redlock::resp::request;

class raw_connection {
public:
    explicit raw_connection(unsigned short port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
        if (fd_ < 0) throw std::runtime_error("socket failed");
        timeval timeout{5, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
            ::close(fd_);
            throw std::runtime_error("connect failed");
        }
    }
    ~raw_connection() { ::close(fd_); }
    raw_connection(const raw_connection&) = delete;
    raw_connection& operator=(const raw_connection&) = delete;

    // Sends one command and returns the raw bytes of its `replies` replies (a SUBSCRIBE to two
    // channels answers twice).
    std::string exchange(const std::vector<std::string>& args, int replies = 1) {
        request req;
        req.push_range(args.front(), std::vector<std::string>(args.begin() + 1, args.end()));
        const std::string_view out = req.payload();
        if (::send(fd_, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size()))
            throw std::runtime_error("send failed");
        std::string raw;
        for (int i = 0; i < replies; ++i)
            raw += read_reply();
        return raw;
    }

private:
    std::string read_reply() {
        reply_parser parser;
        std::string raw;
        for (;;) {
            // What is left of an earlier read first.
            const auto used = parser.feed(pending_);
            raw.append(pending_, 0, used);
            pending_.erase(0, used);
            if (parser.error()) throw std::runtime_error("the server's reply does not parse");
            if (parser.done()) return raw;
            char buf[65536];
            const auto n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) throw std::runtime_error("recv failed or timed out");
            pending_.append(buf, static_cast<std::size_t>(n));
        }
    }

    int fd_;
    std::string pending_;
};

// Commands whose replies cover the types the server sends: maps, sets, doubles, verbatim
// strings, pushes, nested arrays, errors, nulls, big bulks, and our scripts' integer arrays.
const std::vector<std::vector<std::string>> commands = {
    {"PING"},
    {"SET", "k", "v"},
    {"GET", "k"},
    {"GET", "missing"},
    {"SET", "big", std::string(70000, 'x')},
    {"GET", "big"},
    {"INCR", "n"},
    {"INCR", "k"},  // ERR value is not an integer
    {"HSET", "h", "o", "owner", "a:token", "1", "f", "7"},
    {"HGETALL", "h"},
    {"GET", "h"},  // WRONGTYPE
    {"SADD", "s", "a", "b", "c"},
    {"SMEMBERS", "s"},
    {"ZADD", "z", "1.5", "a", "2", "b", "inf", "c"},
    {"ZRANGE", "z", "0", "-1", "WITHSCORES"},
    {"ZSCORE", "z", "a"},
    {"INFO", "server"},
    {"CLIENT", "LIST"},
    {"CONFIG", "GET", "maxmemory*"},
    {"COMMAND", "DOCS", "SET"},
    {"EVAL", "return {1, 2, {3, 'x', {}}, false, 'y'}", "0"},
    {"EVAL", "return redis.error_reply('NOSCRIPT fake')", "0"},
    {"EVAL", "return {tonumber(redis.call('TIME')[1]) > 0 and 1 or 0, -5}", "0"},
    {"EVALSHA", "0000000000000000000000000000000000000000", "0"},
    {"SET", "{r}:lock", "token", "NX", "PX", "10000", "GET"},
    {"SET", "{r}:lock", "other", "NX", "PX", "10000", "GET"},
    {"PTTL", "{r}:lock"},
    {"XADD", "x", "*", "field", "value"},
    {"XRANGE", "x", "-", "+"},
    {"OBJECT", "ENCODING", "k"},
    {"DEBUG", "PROTOCOL", "double"},
    {"DEBUG", "PROTOCOL", "bignum"},
    {"DEBUG", "PROTOCOL", "true"},
    {"DEBUG", "PROTOCOL", "verbatim"},
    {"DEBUG", "PROTOCOL", "attrib"},
    {"DEBUG", "PROTOCOL", "null"},
    {"WAIT", "0", "1"},
    {"FLUSHALL"},
};

void write_file(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string file_name(const std::vector<std::string>& cmd) {
    std::string name;
    for (std::size_t i = 0; i < cmd.size() && i < 2; ++i) {
        for (char c : cmd[i])
            name += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '_';
        name += '_';
    }
    return name.substr(0, 40);
}

std::size_t capture(unsigned short port, bool resp3, const std::filesystem::path& dir) {
    raw_connection conn(port);
    const std::string protocol = resp3 ? "resp3" : "resp2";
    std::string stream;
    std::size_t n = 0;
    auto keep = [&](const std::string& name, const std::string& raw) {
        write_file(dir / ("real_" + protocol + "_" + std::to_string(n++) + "_" + name), raw);
        stream += raw;
    };
    if (resp3) keep("hello", conn.exchange({"HELLO", "3"}));
    for (const auto& cmd : commands)
        keep(file_name(cmd), conn.exchange(cmd));
    // Pub/sub: subscription confirmations, then (RESP3) a message pushed on the same connection.
    keep("subscribe", conn.exchange({"SUBSCRIBE", "{r}:released", "{r}:wake:t"}, 2));
    if (resp3) {
        // PUBLISH's own reply and the message it pushes to us, in either order.
        keep("publish", conn.exchange({"PUBLISH", "{r}:released", "token"}, 2));
    }
    keep("unsubscribe", conn.exchange({"UNSUBSCRIBE"}, 2));
    write_file(dir / ("real_" + protocol + "_stream"), stream);
    return n + 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: capture_replies OUT_DIR\n");
        return 2;
    }
    try {
        const std::filesystem::path dir = argv[1];
        std::filesystem::create_directories(dir);
        redlock::test::redis_server_options opts;
        opts.extra_args = {"--enable-debug-command", "yes"};  // DEBUG PROTOCOL: every RESP3 type
        redlock::test::redis_server server(opts);
        const auto files = capture(server.port(), false, dir) + capture(server.port(), true, dir);
        std::printf("capture_replies: %zu real replies written to %s\n", files, dir.c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "capture_replies: %s\n", e.what());
        return 1;
    }
}
