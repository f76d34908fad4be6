// SPDX-License-Identifier: BSL-1.0
#include "local_servers.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace redlock::cli {

namespace {

using namespace std::chrono_literals;

// A loopback socket to `port`; -1 if nothing listens there.
int connect_loopback(unsigned short port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

std::string exchange(unsigned short port, std::string_view command, long timeout_us) {
    const int fd = connect_loopback(port);
    if (fd < 0) return {};
    timeval tv{0, timeout_us};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string line(command);
    line += "\r\n";
    std::string answer;
    if (::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size())) {
        char buf[4096];
        const auto n = ::read(fd, buf, sizeof buf);
        if (n > 0) answer.assign(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return answer;
}

bool answers_ping(unsigned short port) {
    return exchange(port, "PING", 200'000).starts_with("+PONG");
}

bool exited(pid_t pid) {
    int status = 0;
    return ::waitpid(pid, &status, WNOHANG) == pid;
}

std::string read_all(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

local_servers::local_servers(std::size_t count, std::vector<std::string> extra_args)
    : extra_args_(std::move(extra_args)) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "redlock-demo-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot create a temp dir");
    dir_ = tmpl;
    try {
        for (std::size_t i = 0; i < count; ++i)
            servers_.push_back(start_one(i));
    } catch (...) {
        stop_all();
        throw;
    }
}

local_servers::~local_servers() {
    stop_all();
}

local_servers::server local_servers::start_one(std::size_t index) {
    const auto dir = dir_ + "/" + std::to_string(index);
    std::filesystem::create_directories(dir);
    const auto log = dir + "/redis.log";
    std::mt19937 rng(std::random_device{}());
    const bool cluster =
        std::find(extra_args_.begin(), extra_args_.end(), "--cluster-enabled") != extra_args_.end();
    std::uniform_int_distribution<int> ports(20000, cluster ? 49999 : 59999);
    auto taken = [](unsigned short port) {
        const int fd = connect_loopback(port);
        if (fd >= 0) ::close(fd);
        return fd >= 0;
    };
    for (int attempt = 0; attempt < 5; ++attempt) {
        const auto port = static_cast<unsigned short>(ports(rng));
        if (taken(port) || (cluster && taken(static_cast<unsigned short>(port + 10000)))) continue;
        std::vector<std::string> args = {"redis-server",
                                         "--port",
                                         std::to_string(port),
                                         "--bind",
                                         "127.0.0.1",
                                         "--save",
                                         "",
                                         "--appendonly",
                                         "no",
                                         "--dir",
                                         dir,
                                         "--daemonize",
                                         "no",
                                         "--logfile",
                                         log};
        args.insert(args.end(), extra_args_.begin(), extra_args_.end());
        std::vector<char*> argv;
        for (auto& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_t pid = -1;
        if (const int rc = ::posix_spawnp(&pid, "redis-server", nullptr, nullptr, argv.data(), environ);
            rc != 0) {
            throw std::runtime_error("cannot run redis-server: " + std::string(std::strerror(rc)) +
                                     " (install redis-server, or give --nodes)");
        }
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        while (std::chrono::steady_clock::now() < deadline && !exited(pid)) {
            if (answers_ping(port)) return {pid, port};
            std::this_thread::sleep_for(20ms);
        }
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
    throw std::runtime_error("redis-server did not start; its log:\n" + read_all(log));
}

std::vector<std::string> local_servers::uris() const {
    std::vector<std::string> out;
    for (const auto& s : servers_)
        out.push_back("redis://127.0.0.1:" + std::to_string(s.port));
    return out;
}

std::string local_servers::command(std::size_t i, std::string_view command) const {
    const auto& s = servers_.at(i);
    return s.pid > 0 ? exchange(s.port, command, 500'000) : std::string();
}

void local_servers::kill(std::size_t i) {
    auto& s = servers_.at(i);
    if (s.pid <= 0) return;
    ::kill(s.pid, SIGKILL);
    ::waitpid(s.pid, nullptr, 0);
    s.pid = -1;
}

void local_servers::stop_all() noexcept {
    for (auto& s : servers_) {
        if (s.pid <= 0) continue;
        ::kill(s.pid, SIGTERM);
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        while (!exited(s.pid)) {
            if (std::chrono::steady_clock::now() >= deadline) {
                ::kill(s.pid, SIGKILL);
                ::waitpid(s.pid, nullptr, 0);
                break;
            }
            std::this_thread::sleep_for(10ms);
        }
        s.pid = -1;
    }
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
}

}  // namespace redlock::cli
