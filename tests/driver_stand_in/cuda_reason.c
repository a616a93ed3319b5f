/* SPDX-License-Identifier: Apache-2.0 */
/* What the C API says about the CUDA path here: rngtrk_cuda_available()'s
   status and reason, then a CUDA draw's (into a pointer never written: the
   draw must fail before any launch).  Prints two lines,
     available <status> <reason>
     sample <status> <reason>
   for tests/driver_stand_in_test.sh, which runs it under a stand-in driver. */
#include <stdint.h>
#include <stdio.h>

#include "rngtrk.h"

int main(void) {
    const rngtrk_status available = rngtrk_cuda_available();
    printf("available %d %s\n", (int)available, available == RNGTRK_OK ? "" : rngtrk_last_error());
    rngtrk_philox_state state = {1234, 0};
    rngtrk_sample_spec spec;
    if (RNGTRK_SAMPLE_SPEC_INIT(&spec, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32) != RNGTRK_OK)
        return 2;
    static float not_device_memory[16];
    const rngtrk_status sample =
        rngtrk_cuda_sample(&state, &spec, 0, 16, not_device_memory, sizeof not_device_memory, NULL);
    printf("sample %d %s\n", (int)sample, sample == RNGTRK_OK ? "" : rngtrk_last_error());
    /* The state is the caller's and stays as it was. */
    return state.seed == 1234 && state.offset == 0 ? 0 : 3;
}
