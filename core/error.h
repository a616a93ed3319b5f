// The one exception type the core throws.  It carries the C status code so
// the C layer can convert it without a table; no exception crosses that layer.
#pragma once

#include <stdexcept>
#include <string>

#include "rngtrk.h"

namespace rngtrk {

class Error : public std::runtime_error {
public:
    Error(rngtrk_status status, const std::string &message)
        : std::runtime_error(message), status_(status) {}
    rngtrk_status status() const noexcept { return status_; }

private:
    rngtrk_status status_;
};

[[noreturn]] inline void fail(rngtrk_status status, const std::string &message) {
    throw Error(status, message);
}

}  // namespace rngtrk
