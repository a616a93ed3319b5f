/* SPDX-License-Identifier: Apache-2.0 */
/* Loads librngtrk.so.MAJOR with dlopen, as cffi and other FFIs do, resolves
 * the C ABI by name and uses it. */
#include <dlfcn.h>
#include <stdio.h>

#include "rngtrk.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: dlopen_consumer PATH-TO-librngtrk.so.N\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "FAIL dlopen: %s\n", dlerror());
        return 1;
    }
    uint32_t (*version_number)(void) = (uint32_t(*)(void))dlsym(lib, "rngtrk_version_number");
    rngtrk_status (*tracker_new)(rngtrk_tracker **) =
        (rngtrk_status(*)(rngtrk_tracker **))dlsym(lib, "rngtrk_tracker_new");
    rngtrk_status (*tracker_add)(rngtrk_tracker *, const char *, uint64_t) =
        (rngtrk_status(*)(rngtrk_tracker *, const char *, uint64_t))dlsym(lib, "rngtrk_tracker_add");
    void (*tracker_free)(rngtrk_tracker *) = (void (*)(rngtrk_tracker *))dlsym(lib, "rngtrk_tracker_free");
    const char *(*last_error)(void) = (const char *(*)(void))dlsym(lib, "rngtrk_last_error");
    if (!version_number || !tracker_new || !tracker_add || !tracker_free || !last_error) {
        fprintf(stderr, "FAIL: a symbol is missing\n");
        return 1;
    }
    if (version_number() != RNGTRK_VERSION_NUMBER) {
        fprintf(stderr, "FAIL: version %u, header says %u\n", version_number(), RNGTRK_VERSION_NUMBER);
        return 1;
    }
    rngtrk_tracker *t = NULL;
    if (tracker_new(&t) != RNGTRK_OK || tracker_add(t, "a", 1) != RNGTRK_OK ||
        tracker_add(t, "b", 1) != RNGTRK_E_DUPLICATE_SEED || last_error()[0] == '\0') {
        fprintf(stderr, "FAIL: tracker calls through dlopen\n");
        return 1;
    }
    tracker_free(t);
    dlclose(lib);
    printf("dlopen consumer: ok\n");
    return 0;
}
