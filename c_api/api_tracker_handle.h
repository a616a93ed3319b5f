// The object behind the opaque rngtrk_tracker handle, shared by the C
// layer's tracker and sampling entry points.
#pragma once

#include "../core/tracker.h"
#include "api_guard.h"
#include "rngtrk.h"

struct rngtrk_tracker {
    rngtrk::Tracker impl;
};

namespace rngtrk {

// The tracker behind a handle argument, which must not be NULL (every entry
// point names it "tracker", as rngtrk.h does).
inline Tracker &tracker_of(rngtrk_tracker *tracker) {
    if (tracker == nullptr) fail(RNGTRK_E_INVALID_ARGUMENT, "tracker is NULL");
    return tracker->impl;
}

}  // namespace rngtrk
