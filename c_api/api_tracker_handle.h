// The object behind the opaque rngtrk_tracker handle, shared by the C
// layer's tracker and sampling entry points.
#pragma once

#include "../core/tracker.h"
#include "rngtrk.h"

struct rngtrk_tracker {
    rngtrk::Tracker impl;
};
