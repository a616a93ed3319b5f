/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in for the NVIDIA driver's libcuda.so.1, for the CPU tests of the
   loader's reasons (cuda/cuda_loader.cpp, tests/driver_stand_in_test.sh):
   the few driver API calls it makes, answering as this environment says.
     RNGTRK_STAND_IN_DRIVER  the CUDA version the driver runs (12040: 12.4)
     RNGTRK_STAND_IN_GPUS    the GPUs' compute capabilities, "90,75" (none: "")
     RNGTRK_STAND_IN_INIT    cuInit's result (100: no device; default 0)
   It has none of the calls a CUDA runtime starts with, so a runtime that
   reaches it finds no usable driver. */
#include <stdlib.h>
#include <string.h>

static int number(const char *name, int fallback) {
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? atoi(v) : fallback;
}

/* The i-th compute capability of RNGTRK_STAND_IN_GPUS, or -1. */
static int gpu(int i) {
    const char *v = getenv("RNGTRK_STAND_IN_GPUS");
    if (v == NULL) return -1;
    for (int k = 0; *v != '\0'; ++k) {
        char *end = NULL;
        const long cc = strtol(v, &end, 10);
        if (end == v) return -1;
        if (k == i) return (int)cc;
        v = *end == ',' ? end + 1 : end;
    }
    return -1;
}

static int count(void) {
    int n = 0;
    while (gpu(n) >= 0) ++n;
    return n;
}

int cuInit(unsigned flags) {
    (void)flags;
    return number("RNGTRK_STAND_IN_INIT", 0);
}

int cuDriverGetVersion(int *version) {
    *version = number("RNGTRK_STAND_IN_DRIVER", 13000);
    return 0;
}

int cuDeviceGetCount(int *n) {
    *n = count();
    return 0;
}

int cuDeviceGet(int *device, int ordinal) {
    if (ordinal < 0 || ordinal >= count()) return 101; /* CUDA_ERROR_INVALID_DEVICE */
    *device = ordinal;
    return 0;
}

int cuDeviceGetAttribute(int *value, int attribute, int device) {
    const int cc = gpu(device);
    if (cc < 0) return 101;
    if (attribute == 75) *value = cc / 10; /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
    else if (attribute == 76) *value = cc % 10; /* ..._MINOR */
    else return 1; /* CUDA_ERROR_INVALID_VALUE */
    return 0;
}

int cuDeviceGetName(char *name, int len, int device) {
    if (gpu(device) < 0 || len < 1) return 101;
    strncpy(name, "Stand-in GPU", (size_t)len - 1);
    name[len - 1] = '\0';
    return 0;
}

int cuGetErrorName(int error, const char **name) {
    *name = error == 100 ? "CUDA_ERROR_NO_DEVICE" : error == 999 ? "CUDA_ERROR_UNKNOWN" : "CUDA_ERROR_STAND_IN";
    return 0;
}
