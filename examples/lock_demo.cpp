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
#include <map>
#include <string>

using lock_demo::settings;

int main(int argc, char** argv) {
    settings s;
    std::map<std::string, std::string> kv;
    for (int i = 1; i + 1 < argc; i += 2)
        kv[argv[i]] = argv[i + 1];
    if (kv.count("--nodes")) s.nodes = split_list(kv["--nodes"]);
    if (kv.count("--name")) s.name = kv["--name"];
    if (kv.count("--resource")) s.resource = kv["--resource"];
    if (kv.count("--workers")) s.workers = std::atoi(kv["--workers"].c_str());
    if (kv.count("--seconds")) s.seconds = std::atoi(kv["--seconds"].c_str());
    if (kv.count("--restart-quarantine")) s.restart_quarantine = kv["--restart-quarantine"] != "off";
    if (kv.count("--json")) s.json = kv["--json"] == "on";
    if (s.nodes.empty() || s.workers <= 0 || s.seconds <= 0 || argc % 2 == 0) {
        std::fprintf(stderr,
                     "usage: lock_demo --nodes URI[,URI...] [--name A] [--workers 4] [--seconds 10] "
                     "[--resource demo:printer] [--restart-quarantine on|off] [--json on|off]\n");
        return 2;
    }
    return lock_demo::run(s);
}
