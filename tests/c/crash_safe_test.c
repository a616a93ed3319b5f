/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crash_safe_test — a child saves two different checkpoints to one file in
 * a loop (rngtrk_tracker_save_file); the parent kills it with SIGKILL at
 * random moments, then loads the file.  It must always be exactly one of
 * the two checkpoints: never torn, never missing.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rngtrk.h"

enum { KILLS = 200 };

static uint8_t *bytes_of(rngtrk_tracker *t, size_t *len) {
    rngtrk_tracker_save(t, NULL, 0, len);
    uint8_t *b = malloc(*len);
    rngtrk_tracker_save(t, b, *len, len);
    return b;
}

int main(void) {
    char dir[] = "/tmp/rngtrk-crash-XXXXXX";
    if (mkdtemp(dir) == NULL) return 2;
    char path[256];
    snprintf(path, sizeof path, "%s/tracker.rtck", dir);
    rngtrk_tracker *a, *b;
    rngtrk_tracker_new(&a), rngtrk_tracker_new(&b);
    rngtrk_tracker_manual_seed(a, 1), rngtrk_tracker_manual_seed(b, 2);
    for (int i = 0; i < 40; ++i) {  /* a few KiB, so a write takes a moment */
        char name[32];
        snprintf(name, sizeof name, "state-%d", i);
        rngtrk_tracker_add(a, name, (uint64_t)i), rngtrk_tracker_add(b, name, 1000u + (uint64_t)i);
    }
    size_t len_a, len_b;
    uint8_t *want_a = bytes_of(a, &len_a), *want_b = bytes_of(b, &len_b);
    if (rngtrk_tracker_save_file(a, path) != RNGTRK_OK) return 2;
    srand((unsigned)time(NULL));
    int seen_a = 0, seen_b = 0, torn = 0;
    for (int k = 0; k < KILLS; ++k) {
        const pid_t child = fork();
        if (child == 0) {
            for (;;) {
                rngtrk_tracker_save_file(b, path);
                rngtrk_tracker_save_file(a, path);
            }
        }
        const struct timespec pause = {0, (long)(rand() % 3000) * 1000L};
        nanosleep(&pause, NULL);
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        rngtrk_tracker *t;
        rngtrk_tracker_new(&t);
        size_t len = 0;
        uint8_t *got = NULL;
        if (rngtrk_tracker_load_file(t, path, 0) == RNGTRK_OK) got = bytes_of(t, &len);
        if (got != NULL && len == len_a && memcmp(got, want_a, len) == 0) ++seen_a;
        else if (got != NULL && len == len_b && memcmp(got, want_b, len) == 0) ++seen_b;
        else {
            ++torn;
            fprintf(stderr, "kill %d: the file is neither checkpoint (%s)\n", k, rngtrk_last_error());
        }
        free(got);
        rngtrk_tracker_free(t);
    }
    printf("crash-safe files: %d SIGKILLs during saves; the file was the old/new checkpoint %d/%d times, torn %d times\n",
           KILLS, seen_a, seen_b, torn);
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.rngtrk-tmp", path);
    unlink(tmp), unlink(path), rmdir(dir);
    free(want_a), free(want_b);
    rngtrk_tracker_free(a), rngtrk_tracker_free(b);
    return torn == 0 && seen_a + seen_b == KILLS ? 0 : 1;
}
