/* SPDX-License-Identifier: Apache-2.0 */
// Checkpoint files, written crash-safely (temporary file, fsync, rename,
// fsync of the folder) and read header first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "error.h"

namespace rngtrk {

// Writes `bytes` to `path` so that a crash leaves the old or the new file.
void write_file_atomically(const std::string &path, const std::vector<uint8_t> &bytes);

// The bytes of the checkpoint file at `path`, after checking its header
// (magic, known version, declared length equal to the file's size).
// Errors read "PATH: what is wrong".
std::vector<uint8_t> read_checkpoint_file(const std::string &path);

// Runs `use(bytes)` on the checkpoint file at `path`; an error from either
// step names the file first ("PATH: corrupt checkpoint: ...").
template <class Use>
void use_checkpoint_file(const std::string &path, Use &&use) {
    const std::vector<uint8_t> bytes = read_checkpoint_file(path);
    try {
        use(bytes);
    } catch (const Error &e) {
        fail(e.status(), path + ": " + e.what());
    }
}

}  // namespace rngtrk
