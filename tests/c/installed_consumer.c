/* SPDX-License-Identifier: Apache-2.0 */
/* A C99 user of the installed library: built with the flags that
 * `pkg-config --cflags --libs rngtrk` gives for a temporary install, it runs
 * the tracker's main job and checks the results against the stream. */
#include <rngtrk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "FAIL %s:%d: %s (%s)\n", __FILE__, __LINE__, #cond,  \
                    rngtrk_last_error());                                        \
            return 1;                                                            \
        }                                                                        \
    } while (0)

int main(void) {
    CHECK(rngtrk_version_number() == RNGTRK_VERSION_NUMBER);
    rngtrk_tracker *t = NULL;
    CHECK(rngtrk_tracker_new(&t) == RNGTRK_OK);
    CHECK(rngtrk_tracker_add(t, "model-parallel-rng", 3955) == RNGTRK_OK);
    CHECK(rngtrk_tracker_fork(t, "model-parallel-rng") == RNGTRK_OK);
    rngtrk_philox_state before;
    CHECK(rngtrk_tracker_advance(t, 10, &before) == RNGTRK_OK);
    CHECK(before.seed == 3955 && before.offset == 0);
    CHECK(rngtrk_tracker_restore(t, "model-parallel-rng") == RNGTRK_OK);
    CHECK(rngtrk_tracker_restore(t, "model-parallel-rng") == RNGTRK_E_FORK_ORDER);
    CHECK(strlen(rngtrk_last_error()) > 0);

    size_t len = 0;
    CHECK(rngtrk_tracker_save(t, NULL, 0, &len) == RNGTRK_OK);
    uint8_t *buf = malloc(len);
    CHECK(buf != NULL);
    CHECK(rngtrk_tracker_save(t, buf, len, &len) == RNGTRK_OK);
    rngtrk_tracker *u = NULL;
    CHECK(rngtrk_tracker_new(&u) == RNGTRK_OK);
    CHECK(rngtrk_tracker_load(u, buf, len) == RNGTRK_OK);
    rngtrk_philox_state s;
    CHECK(rngtrk_tracker_get_state(u, "model-parallel-rng", &s) == RNGTRK_OK);
    CHECK(s.seed == 3955 && s.offset == 12);

    /* The stream at the saved offset continues where the first draw stopped. */
    uint32_t whole[16], tail[4];
    CHECK(rngtrk_random_u32(&before, 0, 16, whole) == RNGTRK_OK);
    CHECK(rngtrk_random_u32(&s, 0, 4, tail) == RNGTRK_OK);
    CHECK(memcmp(whole + 12, tail, sizeof tail) == 0);

    free(buf);
    rngtrk_tracker_free(u);
    rngtrk_tracker_free(t);
    printf("installed consumer: ok (library %s)\n", rngtrk_version_string());
    return 0;
}
