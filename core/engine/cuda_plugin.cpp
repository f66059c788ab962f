// Finding and loading libmeshwork_cuda.so (cuda_plugin.h).
#include "core/engine/cuda_plugin.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <regex>

#include "core/common/error.h"

namespace meshwork::engine {

namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_loaded{false};

// What the dynamic loader says when a library the plugin needs is absent, e.g.
// "libcudart.so.13: cannot open shared object file: No such file or directory".
std::string explain_dlopen_error(const std::string& path, const std::string& error) {
    static const std::regex missing_library(R"((lib[^ :/]+\.so[^ :]*): cannot open shared object file)");
    std::smatch m;
    if (std::regex_search(error, m, missing_library) && m[1].str() != kCudaPluginFile) {
        return "the CUDA plugin " + path + " needs " + m[1].str() +
               ", which is not installed or not on the library path (install the CUDA 13 "
               "runtime with cuBLAS, NCCL and CUPTI, or add their folder to LD_LIBRARY_PATH)";
    }
    return "the CUDA plugin " + path + " cannot be loaded: " + error;
}

struct Loaded {
    const CudaPlugin* plugin = nullptr;
    std::string why;
};

Loaded load(const std::string& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
        const bool from_env = std::getenv(kCudaPluginEnv) != nullptr && *std::getenv(kCudaPluginEnv) != '\0';
        return {nullptr, std::string("the CUDA plugin is not installed: ") + path + " does not exist" +
                             (from_env ? std::string(" (from ") + kCudaPluginEnv + ")"
                                       : std::string(" (build with MESHWORK_CUDA=ON, or set ") + kCudaPluginEnv +
                                             " to the plugin's path)")};
    }
    // RTLD_NOW: a missing symbol fails here, with its name, not in the middle of a run.
    // RTLD_LOCAL: the CUDA libraries stay out of the global namespace of the program.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* e = dlerror();
        return {nullptr, explain_dlopen_error(path, e ? e : "unknown dlopen error")};
    }
    auto* abi = reinterpret_cast<int (*)()>(dlsym(handle, "meshwork_cuda_plugin_abi"));
    auto* version = reinterpret_cast<const char* (*)()>(dlsym(handle, "meshwork_cuda_plugin_version"));
    auto* instance = reinterpret_cast<const CudaPlugin* (*)()>(dlsym(handle, "meshwork_cuda_plugin_instance"));
    if (abi == nullptr || version == nullptr || instance == nullptr) {
        dlclose(handle);
        return {nullptr, "the CUDA plugin " + path + " is not a Meshwork plugin (its entry points are missing)"};
    }
    if (abi() != kCudaPluginAbi || std::string(version()) != MESHWORK_VERSION) {
        const std::string theirs = std::string(version()) + " (plugin ABI " + std::to_string(abi()) + ")";
        dlclose(handle);
        return {nullptr, "the CUDA plugin " + path + " belongs to Meshwork " + theirs + ", this is " +
                             MESHWORK_VERSION + " (plugin ABI " + std::to_string(kCudaPluginAbi) + ")"};
    }
    // Never unloaded: backends and collectors it made may live until exit.
    return {instance(), {}};
}

}  // namespace

std::string cuda_plugin_path() {
    if (const char* env = std::getenv(kCudaPluginEnv); env != nullptr && *env != '\0') return env;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    const fs::path dir = ec ? fs::current_path(ec) : exe.parent_path();
    return (dir / kCudaPluginFile).string();
}

const CudaPlugin* load_cuda_plugin(std::string* why) {
    static std::once_flag once;
    static Loaded loaded;
    std::call_once(once, [] {
        loaded = load(cuda_plugin_path());
        g_loaded = loaded.plugin != nullptr;
    });
    if (loaded.plugin == nullptr && why != nullptr) *why = loaded.why;
    return loaded.plugin;
}

bool cuda_plugin_loaded() noexcept { return g_loaded.load(); }

std::string cuda_backend_unavailable(int gpus_needed) {
    std::string why;
    const CudaPlugin* plugin = load_cuda_plugin(&why);
    if (plugin == nullptr) return why;
    return plugin->unavailable_reason(gpus_needed);
}

const CudaPlugin& require_cuda_plugin() {
    std::string why;
    const CudaPlugin* plugin = load_cuda_plugin(&why);
    if (plugin == nullptr) throw InputError("<flags>", "--backend", why);
    return *plugin;
}

}  // namespace meshwork::engine
