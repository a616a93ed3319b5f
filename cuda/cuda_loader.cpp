// SPDX-License-Identifier: Apache-2.0
// The CUDA backend of the shared library: no CUDA runtime here, only a loader.
// Once per process it asks the NVIDIA driver (libcuda.so.1, through the
// driver API) which CUDA it runs and which GPUs it sees, opens the CUDA
// module built for that major beside this library (librngtrk_cuda13.so,
// librngtrk_cuda12.so: cuda_module.h), checks that the module is this build's
// and that some GPU runs its code, and then forwards every call to it.  When
// any step fails, usable() gives the reason and every CUDA call raises it;
// the CPU paths never load anything.
//
// RNGTRK_CUDA_MODULE=FILE loads that module instead of the driver's choice
// (a test, or a module kept elsewhere).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "arch_support.h"
#include "cuda_backend.h"
#include "cuda_module.h"
#include "error.h"

#if !defined(RNGTRK_MODULE_VERSION) || !defined(RNGTRK_MODULE_SOURCE_ID)
#error "build with -DRNGTRK_MODULE_VERSION=\"0.1.0\" -DRNGTRK_MODULE_SOURCE_ID=\"...\" (the Makefile's)"
#endif

namespace rngtrk {
namespace cuda_backend {

namespace {

// The driver API's few entry points used here (cuda.h's values; the
// header itself is not needed to build the library).
using CUresult = int;
constexpr CUresult kSuccess = 0;
constexpr CUresult kNoDevice = 100;
constexpr int kComputeCapabilityMajor = 75;
constexpr int kComputeCapabilityMinor = 76;

struct Driver {
    CUresult (*init)(unsigned);
    CUresult (*driver_version)(int *);
    CUresult (*device_count)(int *);
    CUresult (*device_get)(int *, int);
    CUresult (*attribute)(int *, int, int);
    CUresult (*name)(char *, int, int);
    CUresult (*error_name)(CUresult, const char **);  // may be absent
};

template <class F>
bool bind(void *handle, const char *symbol, F *out) {
    *out = reinterpret_cast<F>(dlsym(handle, symbol));
    return *out != nullptr;
}

std::string driver_error(const Driver &d, CUresult r) {
    const char *name = nullptr;
    if (d.error_name != nullptr && d.error_name(r, &name) == kSuccess && name != nullptr) return name;
    return "CUresult " + std::to_string(r);
}

// The folder this library was loaded from (modules live beside it).
std::string own_folder() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&own_folder), &info) == 0 || info.dli_fname == nullptr) return ".";
    // The real file: a link to the library from another folder (or a
    // relative path and a later chdir) must not move where modules are.
    char *real = realpath(info.dli_fname, nullptr);
    const std::string path = real != nullptr ? real : info.dli_fname;
    std::free(real);
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

bool readable(const std::string &file) { return access(file.c_str(), R_OK) == 0; }

struct Loaded {
    const cuda_module::Table *table = nullptr;
    std::string why;  // when table is null
};

// The module's table if it is this build's, else the reason.
const cuda_module::Table *open_module(const std::string &file, std::string *why) {
    void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char *e = dlerror();
        *why = "cannot load the CUDA module " + file + ": " + (e != nullptr ? e : "dlopen failed");
        return nullptr;
    }
    const cuda_module::Table *(*entry)() = nullptr;
    if (!bind(handle, "rngtrk_cuda_module_v1", &entry)) {
        *why = file + " is not an rngtrk CUDA module (it exports no rngtrk_cuda_module_v1)";
        return nullptr;
    }
    const cuda_module::Table *t = entry();
    const cuda_module::Layout want = cuda_module::this_layout();
    // The interface first: only then are the fields after `layout` this
    // table's.
    const bool same = t != nullptr && t->layout.interface == want.interface && t->version != nullptr &&
                      t->source_id != nullptr && std::string(t->version) == RNGTRK_MODULE_VERSION &&
                      std::string(t->source_id) == RNGTRK_MODULE_SOURCE_ID && t->layout.spec_size == want.spec_size &&
                      t->layout.slice_size == want.slice_size && t->layout.state_size == want.state_size;
    if (!same) {
        const bool readable = t != nullptr && t->layout.interface == want.interface;
        *why = "the CUDA module " + file + " is rngtrk " +
               (readable && t->version != nullptr ? std::string(t->version) : std::string("?")) +
               "'s (module interface " + (t != nullptr ? std::to_string(t->layout.interface) : "?") + ", core " +
               (readable && t->source_id != nullptr ? std::string(t->source_id) : std::string("?")) +
               "), and this librngtrk is " + RNGTRK_MODULE_VERSION + " (interface " +
               std::to_string(want.interface) + ", core " + RNGTRK_MODULE_SOURCE_ID +
               "): install the module built with this library";
        return nullptr;
    }
    if (t->sass == nullptr || t->ptx == nullptr || t->usable == nullptr || t->generate == nullptr ||
        t->generate_slice == nullptr || t->advance_device == nullptr) {
        *why = "the CUDA module " + file + " has an incomplete table: install the module built with this library";
        return nullptr;
    }
    return t;
}

std::vector<int> list_of(const int *zero_terminated) {
    std::vector<int> out;
    for (const int *p = zero_terminated; p != nullptr && *p != 0; ++p) out.push_back(*p);
    return out;
}

// Whether some device runs the module's code; if none does, *why names the
// first device, as the module's own per-device check would.
bool some_device_runs(const Driver &d, int count, int driver, const cuda_module::Table &t, std::string *why) {
    const std::vector<int> sass = list_of(t.sass), ptx = list_of(t.ptx);
    const cuda_arch::Code code{sass.data(), sass.size(), ptx.data(), ptx.size()};
    const char *force = std::getenv("CUDA_FORCE_PTX_JIT");
    const bool force_ptx = force != nullptr && std::string(force) == "1";
    int first_cc = 0;
    for (int i = 0; i < count; ++i) {
        int dev = 0, major = 0, minor = 0;
        if (d.device_get(&dev, i) != kSuccess || d.attribute(&major, kComputeCapabilityMajor, dev) != kSuccess ||
            d.attribute(&minor, kComputeCapabilityMinor, dev) != kSuccess)
            return true;  // the module's own check will say what is wrong
        const int cc = 10 * major + minor;
        if (cuda_arch::code_for(cc, code, force_ptx).runs != cuda_arch::Runs::none) return true;
        if (i == 0) first_cc = cc;
    }
    int dev = 0;
    char name[256] = "unknown GPU";
    if (d.device_get(&dev, 0) != kSuccess || d.name(name, sizeof name, dev) != kSuccess) name[0] = '\0';
    *why = cuda_arch::no_code_reason(0, name[0] != '\0' ? name : "unknown GPU", first_cc, driver, t.runtime, code,
                                     force_ptx);
    return false;
}

Loaded load() {
    Loaded out;
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (cuda == nullptr) {
        out.why = cuda_arch::kNoDriverReason;
        return out;
    }
    Driver d{};
    if (!bind(cuda, "cuInit", &d.init) || !bind(cuda, "cuDriverGetVersion", &d.driver_version) ||
        !bind(cuda, "cuDeviceGetCount", &d.device_count) || !bind(cuda, "cuDeviceGet", &d.device_get) ||
        !bind(cuda, "cuDeviceGetAttribute", &d.attribute) || !bind(cuda, "cuDeviceGetName", &d.name)) {
        out.why = "the libcuda.so.1 found lacks the CUDA driver API (cuInit, cuDriverGetVersion, ...): "
                  "is it NVIDIA's driver library?";
        return out;
    }
    bind(cuda, "cuGetErrorName", &d.error_name);
    int driver = 0;
    if (d.driver_version(&driver) != kSuccess) driver = 0;
    const CUresult init = d.init(0);
    int count = 0;
    if (init == kSuccess && d.device_count(&count) != kSuccess) count = 0;
    if (init == kNoDevice || (init == kSuccess && count == 0)) {
        const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
        out.why = std::string("no CUDA device: the NVIDIA driver (CUDA ") + cuda_arch::cuda_version(driver) +
                  ") sees no GPU" + (visible != nullptr ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : "");
        return out;
    }
    if (init != kSuccess) {
        out.why = "no usable CUDA device: the NVIDIA driver (CUDA " + cuda_arch::cuda_version(driver) +
                  ") failed to start: cuInit: " + driver_error(d, init);
        return out;
    }

    std::string file;
    if (const char *forced = std::getenv("RNGTRK_CUDA_MODULE"); forced != nullptr && *forced != '\0') {
        file = forced;
    } else {
        const std::string dir = own_folder();
        std::vector<int> majors;
        for (int m = 99; m >= 12; --m)
            if (readable(dir + "/" + cuda_module::kFilePrefix + std::to_string(m) + ".so")) majors.push_back(m);
        const int major = cuda_arch::module_for(driver, majors.data(), majors.size());
        if (major == 0) {
            out.why = cuda_arch::no_module_reason(driver, majors.data(), majors.size(), dir);
            return out;
        }
        file = dir + "/" + cuda_module::kFilePrefix + std::to_string(major) + ".so";
    }
    const cuda_module::Table *t = open_module(file, &out.why);
    if (t == nullptr) return out;
    if (!some_device_runs(d, count, driver, *t, &out.why)) return out;
    out.table = t;
    return out;
}

const Loaded &loaded() {
    static const Loaded once = load();
    return once;
}

const cuda_module::Table &table() {
    const Loaded &l = loaded();
    if (l.table == nullptr) fail(Status::unavailable, l.why);
    return *l.table;
}

void check(int status, const char *message) {
    if (status != static_cast<int>(Status::ok)) fail(static_cast<Status>(status), message);
}

}  // namespace

bool usable(std::string *why) {
    const Loaded &l = loaded();
    if (l.table == nullptr) {
        *why = l.why;
        return false;
    }
    char message[cuda_module::kMessageCapacity] = "";
    if (l.table->usable(message) == 1) return true;
    *why = message;
    return false;
}

void generate(const SampleSpec &s, const PhiloxState &st, const uint64_t *device_state, uint64_t numel,
              uint64_t first, uint64_t count, void *out, const void *in, void *stream) {
    char message[cuda_module::kMessageCapacity] = "";
    check(table().generate(&s, &st, device_state, numel, first, count, out, in, stream, message), message);
}

void generate_slice(const SliceRequest &r, const PhiloxState &st, void *stream) {
    char message[cuda_module::kMessageCapacity] = "";
    check(table().generate_slice(&r, &st, stream, message), message);
}

void advance_device(uint64_t *device_state, uint64_t increment, void *stream) {
    char message[cuda_module::kMessageCapacity] = "";
    check(table().advance_device(device_state, increment, stream, message), message);
}

}  // namespace cuda_backend
}  // namespace rngtrk
