/* SPDX-License-Identifier: Apache-2.0 */
/* Prints a digest of draws that pass through every engine: the raw words
 * and, for each layout, 4096 normal floats (runs long enough for the SIMD
 * engines).  tests/cmake_subproject_test.sh builds it against the CMake
 * build and against the Makefile's, which must print the same line. */
#include <rngtrk.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

int main(void) {
    static float normal[4096];
    uint32_t words[64];
    rngtrk_philox_state state = {1234, 8};
    uint64_t h = 14695981039346656037ULL;
    if (rngtrk_random_u32(&state, 3, 64, words) != RNGTRK_OK) return fprintf(stderr, "%s\n", rngtrk_last_error()), 1;
    h = fnv(h, words, sizeof words);
    for (int layout = RNGTRK_LAYOUT_STATELESS; layout <= RNGTRK_LAYOUT_TRITON; ++layout) {
        rngtrk_sample_spec spec;
        if (RNGTRK_SAMPLE_SPEC_INIT(&spec, (rngtrk_layout)layout, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32) != RNGTRK_OK ||
            rngtrk_sample(&state, &spec, 5, 4096, normal, sizeof normal) != RNGTRK_OK)
            return fprintf(stderr, "%s\n", rngtrk_last_error()), 1;
        h = fnv(h, normal, sizeof normal);
    }
    printf("draw digest %016llx (library %s)\n", (unsigned long long)h, rngtrk_version_string());
    return 0;
}
