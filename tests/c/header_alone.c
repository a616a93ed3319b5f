/* SPDX-License-Identifier: Apache-2.0 */
/* The public header compiles alone, first, with strict warnings (C99 and C++). */
#include "rngtrk.h"

int header_alone_uses_every_type(void);
int header_alone_uses_every_type(void) {
    rngtrk_philox_state s = {1u, 4u};
    rngtrk_status st = RNGTRK_OK;
    rngtrk_tracker *t = 0;
    return (int)(s.seed + s.offset) + (int)st + (t == 0) + RNGTRK_STATE_BYTES + RNGTRK_MAX_NAME_BYTES;
}
