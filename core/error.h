/* SPDX-License-Identifier: Apache-2.0 */
// The one exception type the core throws.  It carries the status code so
// the C layer can convert it without a table; no exception crosses that layer.
#pragma once

#include <stdexcept>
#include <string>

#include "status.h"

namespace rngtrk {

class Error : public std::runtime_error {
public:
    Error(Status status, const std::string &message) : std::runtime_error(message), status_(status) {}
    Status status() const noexcept { return status_; }

private:
    Status status_;
};

[[noreturn]] inline void fail(Status status, const std::string &message) { throw Error(status, message); }

}  // namespace rngtrk
