// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_SCRATCH_DIR_HPP
#define REDLOCK_TEST_SUPPORT_SCRATCH_DIR_HPP

#include "support/redis_server.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace redlock::test {

/// A temp dir for a test's files (child processes' output, config files), removed at the end.
/// Throws std::runtime_error if it cannot be made.
struct scratch_dir {
    std::filesystem::path path;
    scratch_dir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "redlock-test-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + " failed");
        path = tmpl;
    }
    ~scratch_dir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;
    [[nodiscard]] std::string file(const std::string& name) const { return (path / name).string(); }
};

inline std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// A client_config JSON file for `servers` (in `dir`, named `name`.json) for child processes:
/// timeouts that suit a loaded 2-core machine, and no restart quarantine (the servers started
/// empty a moment ago). Returns its path.
inline std::string write_config_file(const scratch_dir& dir,
                                     const std::vector<std::unique_ptr<redis_server>>& servers,
                                     const std::string& name) {
    std::string nodes;
    for (const auto& s : servers)
        nodes += (nodes.empty() ? "\"" : ", \"") + s->uri() + "\"";
    const auto path = dir.file(name + ".json");
    std::ofstream(path) << "{\"nodes\": [" << nodes
                        << "], \"node_timeout_ms\": 500, \"restart_quarantine\": false, "
                           "\"retry\": {\"min_delay_ms\": 5, \"max_delay_ms\": 50}}";
    return path;
}

}  // namespace redlock::test

#endif
