// Checkpoint files, written crash-safely (temporary file, fsync, rename,
// fsync of the folder) and read header first.
#pragma once

#include <string>
#include <vector>

#include "tracker.h"

namespace rngtrk {

// Writes `bytes` to `path` so that a crash leaves the old or the new file.
void write_file_atomically(const std::string &path, const std::vector<uint8_t> &bytes);

// The bytes of the checkpoint file at `path`, after checking its header
// (magic, known version, declared length equal to the file's size).
std::vector<uint8_t> read_checkpoint_file(const std::string &path);

}  // namespace rngtrk
