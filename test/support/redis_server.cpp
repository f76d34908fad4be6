// SPDX-License-Identifier: BSL-1.0
#include "redis_server.hpp"

#include "resp/reply_parser.hpp"
#include "support/unique_fd.hpp"
#include <redlock/resp/request.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <span>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

constexpr auto default_command_timeout = 5s;
constexpr auto start_timeout = 10s;
constexpr auto stop_grace = 5s;
constexpr int max_port_attempts = 5;
constexpr std::size_t log_tail_lines = 25;

std::string errno_text(int err) {
    return std::strerror(err);
}

// ---------------------------------------------------------------------------------------------
// Process-wide registry of live servers.
//
// A test that crashes, aborts or calls exit() never runs the destructors of its servers, and a
// leaked redis-server keeps its port and, under ctest, keeps the run from finishing. The
// fatal-signal handler must read this registry, so it is a fixed array of lock-free atomics
// (no allocation, no lock inside the handler); the mutex only orders writers.
//
// Each slot also records the PID of the process that started the server: after fork() the child
// has a copy of the registry, and it must never kill its parent's servers (the crash test
// forks a child that aborts on purpose).

constexpr std::size_t max_servers = 256;
static_assert(std::atomic<pid_t>::is_always_lock_free, "the signal handler needs lock-free atomics");

// 0 = free, -1 = reserved (fork in progress), > 0 = PID of a live, not yet reaped server.
std::array<std::atomic<pid_t>, max_servers> g_server_pid{};
std::array<std::atomic<pid_t>, max_servers> g_owner_pid{};
// Only for the atexit cleanup (never read by the signal handler): guarded by the mutex.
std::array<std::string, max_servers> g_server_dir;
std::mutex g_registry_mutex;

int reserve_slot(const std::string& dir) {
    std::lock_guard lock(g_registry_mutex);
    for (std::size_t i = 0; i < max_servers; ++i) {
        if (g_server_pid[i].load() == 0) {
            g_owner_pid[i].store(::getpid());
            g_server_pid[i].store(-1);
            g_server_dir[i] = dir;
            return static_cast<int>(i);
        }
    }
    throw std::runtime_error("redis_server: more than 256 servers alive at once");
}

void release_slot(int slot) noexcept {
    std::lock_guard lock(g_registry_mutex);
    g_server_pid[static_cast<std::size_t>(slot)].store(0);
}

// False once the atexit cleanup has killed and reaped this server: the PID may then belong to
// an unrelated process and must not be signalled or waited for.
bool slot_holds(int slot, pid_t pid) noexcept {
    if (slot < 0) return false;
    const auto i = static_cast<std::size_t>(slot);
    return g_server_pid[i].load() == pid && g_owner_pid[i].load() == ::getpid();
}

void kill_registered_servers_at_exit() {
    std::lock_guard lock(g_registry_mutex);
    const pid_t self = ::getpid();
    for (std::size_t i = 0; i < max_servers; ++i) {
        const pid_t pid = g_server_pid[i].load();
        if (pid <= 0 || g_owner_pid[i].load() != self) continue;
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        g_server_pid[i].store(0);
        std::error_code ec;
        std::filesystem::remove_all(g_server_dir[i], ec);
    }
}

// Async-signal-safe: atomics, getpid, kill, sigaction, raise.
void kill_registered_servers_and_reraise(int sig) {
    const int saved_errno = errno;
    const pid_t self = ::getpid();
    for (std::size_t i = 0; i < max_servers; ++i) {
        const pid_t pid = g_server_pid[i].load();
        if (pid > 0 && g_owner_pid[i].load() == self) ::kill(pid, SIGKILL);
    }
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    // `sig` is blocked while this handler runs, so the re-raised signal is delivered, with its
    // default action (terminate, core dump), as soon as the handler returns.
    ::raise(sig);
    errno = saved_errno;
}

constexpr std::array fatal_signals{SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGINT, SIGTERM};

// Called before every start rather than once: a handler is installed only for signals that
// still have their default action. We never replace someone else's handler: Boost.Test's
// execution monitor installs its own for SIGABRT/SIGSEGV/... around each test case (and only
// when the disposition is the default) to report the crash and go on with the next test; the
// servers of that test are then killed by the atexit cleanup, and PR_SET_PDEATHSIG covers every
// way the process can die. Chaining to a saved handler is not safe either: Boost.Test restores
// its predecessor when the test case ends, which would leave us calling a stale handler.
void install_cleanup_hooks() {
    std::lock_guard lock(g_registry_mutex);
    static bool atexit_registered = false;
    if (!atexit_registered) {
        std::atexit(&kill_registered_servers_at_exit);
        atexit_registered = true;
    }
    for (int sig : fatal_signals) {
        struct sigaction current {};
        if (::sigaction(sig, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
        struct sigaction action {};
        action.sa_handler = &kill_registered_servers_and_reraise;
        ::sigemptyset(&action.sa_mask);
        ::sigaction(sig, &action, nullptr);
    }
}

// ---------------------------------------------------------------------------------------------
// Small POSIX helpers (and unique_fd.hpp).

std::string make_temp_dir() {
    const char* env = std::getenv("TMPDIR");
    std::string base = (env != nullptr && *env != '\0') ? env : "/tmp";
    while (base.size() > 1 && base.back() == '/')
        base.pop_back();
    // The unix socket lives in this dir and sun_path holds only 108 bytes: a deep $TMPDIR
    // (macOS-style per-user dirs, CI workspaces) would make redis-server refuse to start.
    constexpr std::string_view suffix = "/redlock-test-XXXXXX/redis.sock";
    if (base.size() + suffix.size() >= sizeof(sockaddr_un{}.sun_path)) base = "/tmp";
    std::string path = base + "/redlock-test-XXXXXX";
    if (::mkdtemp(path.data()) == nullptr) {
        throw std::runtime_error("redis_server: mkdtemp(" + path + "): " + errno_text(errno));
    }
    return path;
}

// Asks the kernel for a free port. Another process may take it before redis-server binds it;
// the caller then retries with a new one.
unsigned short pick_free_port() {
    unique_fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) throw std::runtime_error("redis_server: socket: " + errno_text(errno));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        throw std::runtime_error("redis_server: bind 127.0.0.1:0: " + errno_text(errno));
    }
    socklen_t len = sizeof addr;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        throw std::runtime_error("redis_server: getsockname: " + errno_text(errno));
    }
    return ntohs(addr.sin_port);
}

std::size_t file_size_or_zero(const std::string& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    return ec ? 0 : static_cast<std::size_t>(size);
}

std::string read_file_from(const std::string& path, std::size_t offset) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    in.seekg(static_cast<std::streamoff>(offset));
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string last_lines(const std::string& text, std::size_t n) {
    std::size_t pos = text.size();
    if (pos > 0 && text[pos - 1] == '\n') --pos;
    while (n > 0 && pos > 0) {
        const auto nl = text.rfind('\n', pos - 1);
        if (nl == std::string::npos) return text;
        pos = nl;
        --n;
    }
    return n == 0 ? text.substr(pos + 1) : text;
}

std::string describe_status(int status) {
    if (status == -1) return "exited";
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) +
               ")";
    }
    return "ended with wait status " + std::to_string(status);
}

// redis-server refused the port because someone took it after pick_free_port() closed it.
struct port_taken : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] void report_errno_and_exit(int err_fd) {
    const int err = errno;
    [[maybe_unused]] auto n = ::write(err_fd, &err, sizeof err);
    ::_exit(127);
}

// Between fork() and exec() only async-signal-safe calls: the test process may have other
// threads (an io_context), and one of them may hold the malloc lock at the time of the fork.
[[noreturn]] void exec_child(pid_t parent, const char* file, char* const* argv, int devnull, int log_fd,
                             int err_fd, int max_fd) {
    // Die with the test process whatever kills it, SIGKILL included. The death signal is sent
    // when the *thread* that forked us exits. If the parent died before prctl() took effect we
    // have already been reparented: nobody would ever stop us.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) report_errno_and_exit(err_fd);
    if (::getppid() != parent) ::_exit(127);

    // Handled signals are reset by exec, ignored ones are not; the mask is inherited as is (and
    // the parent blocked everything around fork).
    for (int sig = 1; sig < NSIG; ++sig) {
        if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
    }
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);

    // Config errors ("Bad directive") go to stderr before the logfile is opened: keep them in
    // the log so a failed start can show them.
    if (::dup2(devnull, 0) < 0 || ::dup2(log_fd, 1) < 0 || ::dup2(log_fd, 2) < 0)
        report_errno_and_exit(err_fd);
    // Descriptors of the test (sockets, pipes of other tests) must not stay open in the server:
    // a test waiting for EOF on a pipe would wait for the server to die. err_fd is CLOEXEC.
    const auto e = static_cast<unsigned>(err_fd);
    const bool closed = (e == 3 || ::close_range(3, e - 1, 0) == 0) && ::close_range(e + 1, ~0u, 0) == 0;
    if (!closed) {
        for (int fd = 3; fd < max_fd; ++fd) {
            if (fd != err_fd) ::close(fd);
        }
    }
    ::execvp(file, argv);
    report_errno_and_exit(err_fd);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

redis_server::redis_server(redis_server_options opts) : opts_(std::move(opts)), creator_pid_(::getpid()) {
    for (std::size_t i = 0; i + 1 < opts_.extra_args.size(); ++i) {
        if (opts_.extra_args[i] == "--requirepass") password_ = opts_.extra_args[i + 1];
    }
    if (opts_.sentinel && opts_.cluster)
        throw std::invalid_argument("redis_server: sentinel and cluster modes exclude each other");
    in_addr host{};
    if (::inet_pton(AF_INET, opts_.host.c_str(), &host) != 1 || (ntohl(host.s_addr) >> 24) != 127)
        throw std::invalid_argument("redis_server: host '" + opts_.host + "' is not a loopback IPv4 address");
    host_address_ = host.s_addr;
    install_cleanup_hooks();
    dir_ = make_temp_dir();
    try {
        for (int attempt = 1;; ++attempt) {
            port_ = pick_free_port();
            if (opts_.tls) tls_port_ = pick_free_port();
            if (opts_.cluster) cluster_port_ = pick_free_port();
            if (opts_.sentinel) write_sentinel_config();
            const auto log_offset = file_size_or_zero(dir_ + "/redis.log");
            try {
                spawn();
                wait_ready(log_offset);
                return;
            } catch (const port_taken&) {
                if (attempt >= max_port_attempts) throw;
            }
        }
    } catch (...) {
        kill9();
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
        throw;
    }
}

redis_server::~redis_server() {
    try {
        stop();
    } catch (...) {
        // stop() reports nothing; a failure here must not terminate the test run.
    }
    // A forked child that unwinds its copy of this object must not delete the parent's dir.
    if (::getpid() != creator_pid_) return;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

std::string redis_server::uri() const {
    return "redis://" + opts_.host + ":" + std::to_string(port_);
}

std::string redis_server::tls_uri() const {
    return "rediss://" + opts_.host + ":" + std::to_string(tls_port_);
}

std::string redis_server::sentinel_config_file() const {
    return dir_ + "/sentinel.conf";
}

// Only at construction (once per port attempt): restart() must keep what Sentinel wrote there.
void redis_server::write_sentinel_config() const {
    const auto path = sentinel_config_file();
    std::ofstream out(path, std::ios::trunc);
    out << "port " << port_ << "\n"
        << "dir \"" << dir_ << "\"\n"
        << opts_.sentinel_config;
    if (!opts_.sentinel_config.empty() && opts_.sentinel_config.back() != '\n') out << "\n";
    out.close();
    if (!out) throw std::runtime_error("redis_server: cannot write " + path);
}

std::string redis_server::unix_socket() const {
    return dir_ + "/redis.sock";
}

pid_t redis_server::pid() const noexcept {
    return exited() ? -1 : pid_;
}

bool redis_server::running() const noexcept {
    return !exited();
}

// Looks without reaping (WNOWAIT), so the PID stays ours until reap() and cannot be reused by
// an unrelated process that a later kill() would then hit.
bool redis_server::exited() const noexcept {
    if (pid_ <= 0 || !slot_holds(slot_, pid_)) return true;
    siginfo_t info{};
    int rc;
    do {
        rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    } while (rc != 0 && errno == EINTR);
    // ECHILD: someone else reaped it (SIGCHLD set to SIG_IGN does that).
    if (rc != 0) return true;
    return info.si_pid != 0;
}

int redis_server::reap() noexcept {
    int status = -1;
    if (pid_ > 0 && slot_holds(slot_, pid_)) {
        // The process is dead (a zombie) by now: leaving the registry first means the signal
        // handler can never kill a recycled PID.
        release_slot(slot_);
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
    }
    pid_ = -1;
    slot_ = -1;
    paused_ = false;
    return status;
}

void redis_server::spawn() {
    // Everything the child needs is built before fork(): see exec_child.
    const char* env_binary = std::getenv("REDLOCK_TEST_REDIS_SERVER");
    const std::string binary = (env_binary != nullptr && *env_binary != '\0') ? env_binary : "redis-server";
    const std::string log_path = dir_ + "/redis.log";
    std::vector<std::string> args{binary};
    // The config file must be the first argument; --sentinel is what selects the mode.
    if (opts_.sentinel) args.insert(args.end(), {sentinel_config_file(), "--sentinel"});
    const auto option = [&args](const char* name, std::string value) {
        args.emplace_back(name);
        args.push_back(std::move(value));
    };
    option("--port", std::to_string(port_));
    if (opts_.tls) option("--tls-port", std::to_string(tls_port_));
    if (opts_.cluster) {
        option("--cluster-enabled", "yes");
        option("--cluster-config-file", "nodes.conf");
        option("--cluster-port", std::to_string(cluster_port_));
    }
    option("--bind", opts_.host);
    if (opts_.host != "127.0.0.1") option("--bind-source-addr", opts_.host);
    option("--save", "");  // no RDB snapshots: a kill9() without AOF loses everything
    option("--appendonly", opts_.appendonly ? "yes" : "no");
    if (opts_.appendonly) option("--appendfsync", opts_.appendfsync);
    option("--dir", dir_);
    option("--dbfilename", "dump.rdb");
    option("--appendfilename", "appendonly.aof");
    option("--daemonize", "no");  // it must stay our child: we signal and reap it
    option("--logfile", log_path);
    option("--unixsocket", unix_socket());
    option("--unixsocketperm", "700");
    option("--enable-debug-command", "local");      // DEBUG SLEEP / SEGFAULT for fault tests
    option("--enable-protected-configs", "local");  // CONFIG SET dir etc. from tests
    option("--protected-mode", "no");
    args.insert(args.end(), opts_.extra_args.begin(), opts_.extra_args.end());
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    // A socket file left by a kill9() would make wait_ready() believe the new process is up.
    std::error_code ec;
    std::filesystem::remove(unix_socket(), ec);

    unique_fd log_fd(above_stdio(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)));
    if (log_fd.get() < 0)
        throw std::runtime_error("redis_server: open " + log_path + ": " + errno_text(errno));
    unique_fd devnull(above_stdio(::open("/dev/null", O_RDONLY | O_CLOEXEC)));
    if (devnull.get() < 0) throw std::runtime_error("redis_server: open /dev/null: " + errno_text(errno));
    // exec failures (binary not found) come back through this pipe; EOF means exec succeeded.
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        throw std::runtime_error("redis_server: pipe2: " + errno_text(errno));
    unique_fd err_read(pipe_fds[0]);
    unique_fd err_write(above_stdio(pipe_fds[1]));
    if (err_write.get() < 0) throw std::runtime_error("redis_server: fcntl: " + errno_text(errno));

    rlimit nofile{};
    const int max_fd = (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY)
                           ? static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, 1u << 16))
                           : 1 << 16;

    const int slot = reserve_slot(dir_);
    // With every signal blocked, the crash handler cannot run between fork() and the moment the
    // new PID is in the registry: it would miss the server.
    sigset_t all, old;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, &old);
    const pid_t parent = ::getpid();
    const pid_t child = ::fork();
    if (child == 0) {
        exec_child(parent, binary.c_str(), argv.data(), devnull.get(), log_fd.get(), err_write.get(), max_fd);
    }
    const int fork_errno = errno;
    if (child > 0) g_server_pid[static_cast<std::size_t>(slot)].store(child);
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (child < 0) {
        release_slot(slot);
        throw std::runtime_error("redis_server: fork: " + errno_text(fork_errno));
    }
    pid_ = child;
    slot_ = slot;
    paused_ = false;

    err_write.reset();
    int exec_errno = 0;
    ssize_t n;
    do {
        n = ::read(err_read.get(), &exec_errno, sizeof exec_errno);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
        reap();
        throw std::runtime_error("redis_server: cannot execute '" + binary + "': " + errno_text(exec_errno) +
                                 " (install redis-server or set REDLOCK_TEST_REDIS_SERVER)");
    }
}

void redis_server::wait_ready(std::size_t log_offset) {
    const std::string log_path = dir_ + "/redis.log";
    const auto failure = [&](const std::string& what) {
        std::ostringstream msg;
        msg << "redis_server: " << what << " (port " << port_ << ", dir " << dir_ << "); last lines of "
            << log_path << ":\n"
            << last_lines(read_file_from(log_path, log_offset), log_tail_lines);
        return msg.str();
    };

    const auto deadline = steady::now() + start_timeout;
    for (;;) {
        if (exited()) {
            const pid_t pid = pid_;
            const int status = reap();
            const std::string log = read_file_from(log_path, log_offset);
            const std::string what = "redis-server (pid " + std::to_string(pid) + ") " +
                                     describe_status(status) + " during startup";
            if (log.find("Address already in use") != std::string::npos) throw port_taken(failure(what));
            throw std::runtime_error(failure(what));
        }
        const auto now = steady::now();
        if (now >= deadline) {
            kill9();
            throw std::runtime_error(failure("redis-server did not answer PING within 10 s"));
        }
        try {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
            const auto reply = command({"PING"}, std::clamp(left, 1ms, std::chrono::milliseconds(1s)));
            // Any answer but LOADING (AOF/RDB still being read) means it serves commands; with an
            // ACL that disables the default user, PING gets NOAUTH, which is an answer too.
            // The unix socket is created after the TCP listener, in a dir nobody else uses: if
            // it exists and our child is alive, the answer came from our child and not from a
            // stranger that grabbed the port first (our child would then fail to bind and exit).
            if (reply.error_code() != "LOADING" && std::filesystem::exists(unix_socket()) && !exited())
                return;
        } catch (const std::runtime_error&) {
            // Not listening yet.
        }
        std::this_thread::sleep_for(10ms);
    }
}

void redis_server::stop() {
    if (pid_ <= 0) return;
    if (!exited()) {
        ::kill(pid_, SIGCONT);
        ::kill(pid_, SIGTERM);
        const auto deadline = steady::now() + stop_grace;
        while (!exited() && steady::now() < deadline)
            std::this_thread::sleep_for(2ms);
        if (!exited()) ::kill(pid_, SIGKILL);
    }
    reap();
}

void redis_server::kill9() {
    if (pid_ <= 0) return;
    if (!exited()) ::kill(pid_, SIGKILL);
    reap();
}

void redis_server::restart() {
    stop();
    const auto log_offset = file_size_or_zero(dir_ + "/redis.log");
    try {
        spawn();
        wait_ready(log_offset);
    } catch (...) {
        kill9();
        throw;
    }
}

void redis_server::pause() {
    if (paused_ || exited()) return;
    ::kill(pid_, SIGSTOP);
    // kill() returns before the target has stopped; wait for it so the caller can rely on it.
    // WNOWAIT leaves the state to be collected by reap(), should the process die instead.
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WSTOPPED | WEXITED | WNOWAIT) != 0 &&
           errno == EINTR) {
    }
    paused_ = info.si_code == CLD_STOPPED;
}

void redis_server::resume() {
    if (exited()) return;
    // Unlike SIGSTOP, SIGCONT resumes the process inside kill() itself.
    ::kill(pid_, SIGCONT);
    paused_ = false;
}

resp::value redis_server::command(const std::vector<std::string>& args) const {
    return command(args, std::chrono::duration_cast<std::chrono::milliseconds>(default_command_timeout));
}

resp::value redis_server::command(const std::vector<std::string>& args,
                                  std::chrono::milliseconds timeout) const {
    if (args.empty()) throw std::invalid_argument("redis_server::command: empty command");
    const auto deadline = steady::now() + timeout;
    const std::string where =
        "redis_server::command " + args.front() + " on " + opts_.host + ":" + std::to_string(port_);
    const auto timed_out = [&]() {
        return std::runtime_error(where + ": no reply within " + std::to_string(timeout.count()) + " ms");
    };

    resp::request req;
    if (password_) req.push("AUTH", *password_);
    req.push_range(args.front(), std::span(args).subspan(1));

    unique_fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) throw std::runtime_error(where + ": socket: " + errno_text(errno));
    // SO_RCVTIMEO/SO_SNDTIMEO bound each call (SO_SNDTIMEO bounds connect() too on Linux); they
    // are re-armed with what is left so the whole exchange respects one deadline.
    const auto arm = [&]() {
        const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - steady::now());
        if (left.count() <= 0) throw timed_out();
        timeval tv{};
        tv.tv_sec = static_cast<time_t>(left.count() / 1'000'000);
        tv.tv_usec = static_cast<suseconds_t>(left.count() % 1'000'000);
        ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    };

    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = host_address_;
    addr.sin_port = htons(port_);
    arm();
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        if (errno == EINPROGRESS || errno == EAGAIN) throw timed_out();
        throw std::runtime_error(where + ": connect: " + errno_text(errno));
    }

    std::string_view out = req.payload();
    while (!out.empty()) {
        arm();
        const auto n = ::send(fd.get(), out.data(), out.size(), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) throw timed_out();
            throw std::runtime_error(where + ": send: " + errno_text(errno));
        }
        out.remove_prefix(static_cast<std::size_t>(n));
    }

    resp::reply_parser parser;
    std::vector<resp::value> replies;
    std::array<char, 4096> buf;
    while (replies.size() < req.size()) {
        arm();
        const auto n = ::recv(fd.get(), buf.data(), buf.size(), 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) throw timed_out();
            throw std::runtime_error(where + ": recv: " + errno_text(errno));
        }
        if (n == 0) throw std::runtime_error(where + ": connection closed by the server before the reply");
        std::string_view in(buf.data(), static_cast<std::size_t>(n));
        while (!in.empty()) {
            const auto used = parser.feed(in);
            in.remove_prefix(used);
            if (parser.error()) throw std::runtime_error(where + ": bad reply: " + parser.error().message());
            if (parser.done()) {
                replies.push_back(parser.take());
            } else if (used == 0) {
                break;
            }
        }
    }
    return std::move(replies.back());
}

std::vector<std::unique_ptr<redis_server>> start_redis_servers(std::size_t n, redis_server_options opts) {
    std::vector<std::unique_ptr<redis_server>> servers;
    servers.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
        servers.push_back(std::make_unique<redis_server>(opts));
    return servers;
}

}  // namespace redlock::test
