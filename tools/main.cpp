// SPDX-License-Identifier: BSL-1.0
// redlock: distributed locks on Redis from the command line. See `redlock --help`.
#include "commands.hpp"

#include <iostream>

int main(int argc, char** argv) {
    return redlock::cli::redlock_main(argc, argv, std::cout, std::cerr);
}
