// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the rngtrk command's argument parsing.  The input is split at
// NUL bytes into arguments; the command must return 0, 1 or 2, never crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" int rngtrk_cli_main(int argc, char **argv);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::vector<std::string> args{"rngtrk"};
    std::string cur;
    for (size_t i = 0; i < size; ++i) {
        if (data[i] == 0) args.push_back(cur), cur.clear();
        else cur.push_back(static_cast<char>(data[i]));
    }
    args.push_back(cur);
    if (args.size() > 40) return 0;
    for (const std::string &a : args) {
        // Bound the work: no huge counts, and no device files that block.
        if (a.size() > 7 && a.find_first_not_of("0123456789") == std::string::npos) return 0;
        if (a.rfind("/dev", 0) == 0 || a.rfind("/proc", 0) == 0 || a.rfind("/sys", 0) == 0) return 0;
    }
    std::vector<char *> argv;
    for (std::string &a : args) argv.push_back(&a[0]);
    argv.push_back(nullptr);
    std::FILE *sink = std::freopen("/dev/null", "w", stdout);
    (void)sink;
    const int rc = rngtrk_cli_main(static_cast<int>(args.size()), argv.data());
    if (rc < 0 || rc > 2) std::abort();
    return 0;
}
