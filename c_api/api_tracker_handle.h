/* SPDX-License-Identifier: Apache-2.0 */
// The object behind the opaque rngtrk_tracker handle, shared by the C
// layer's tracker and sampling entry points.
#pragma once

#include "../core/tracker.h"
#include "api_error_slot.h"
#include "rngtrk.h"

struct rngtrk_tracker {
    rngtrk::Tracker impl;
    // The last failed call's message, for rngtrk_tracker_last_error
    // (mutable: calls on a const tracker fail too).
    mutable rngtrk::ErrorSlot last_error;
};
