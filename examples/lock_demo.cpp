// SPDX-License-Identifier: BSL-1.0
// Workers of one process contend for one resource with Redlock over the given nodes. Each grant
// prints the worker, the validity left and what every node answered; each failure prints the
// error's name and the diagnostics, which name the nodes. Run two of these side by side
// (scripts/demo does, and kills nodes under them) to see mutual exclusion across processes.
//
//   lock_demo --nodes URI[,URI...] [--name A] [--workers 4] [--seconds 10] [--resource demo:printer]
//             [--restart-quarantine on|off] [--json on|off]
#include "example_support.hpp"
#include "lock_demo_workers.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

using lock_demo::settings;

namespace {

// A switch's value: on or off, nothing else.
bool parse_switch(const std::string& value, bool& out) {
    if (value != "on" && value != "off") return false;
    out = value == "on";
    return true;
}

// A count in [1, 100000], all digits.
bool parse_count(const std::string& value, int& out) {
    if (value.empty() || value.size() > 6 || value.find_first_not_of("0123456789") != std::string::npos)
        return false;
    out = std::atoi(value.c_str());
    return out >= 1 && out <= 100000;
}

}  // namespace

int main(int argc, char** argv) {
    settings s;
    bool ok = argc % 2 == 1;
    for (int i = 1; ok && i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        const std::string value = argv[i + 1];
        if (flag == "--nodes") {
            s.nodes = split_list(value);
        } else if (flag == "--name") {
            s.name = value;
        } else if (flag == "--resource") {
            s.resource = value;
        } else if (flag == "--workers") {
            ok = parse_count(value, s.workers);
        } else if (flag == "--seconds") {
            ok = parse_count(value, s.seconds);
        } else if (flag == "--restart-quarantine") {
            ok = parse_switch(value, s.restart_quarantine);
        } else if (flag == "--json") {
            ok = parse_switch(value, s.json);
        } else {
            ok = false;
        }
        if (!ok) std::fprintf(stderr, "lock_demo: bad flag or value: %s %s\n", flag.c_str(), value.c_str());
    }
    if (!ok || s.nodes.empty()) {
        std::fprintf(stderr,
                     "usage: lock_demo --nodes URI[,URI...] [--name A] [--workers 4] [--seconds 10] "
                     "[--resource demo:printer] [--restart-quarantine on|off] [--json on|off]\n");
        return 2;
    }
    return lock_demo::run(s);
}
