#include "profiler/import/kineto_categories.h"

#include <array>
#include <string>
#include <utility>

namespace meshwork::profiler {

namespace {

bool ends_with(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

}  // namespace

KinetoRole kineto_role_of(std::string_view category) {
    std::string c(category);
    for (auto& ch : c) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    static constexpr std::array<std::pair<std::string_view, KinetoRole>, 12> kExact{{
        {"kernel", KinetoRole::DeviceKernel},
        {"gpu_memcpy", KinetoRole::DeviceMemcpy},
        {"memcpy", KinetoRole::DeviceMemcpy},
        {"gpu_memset", KinetoRole::DeviceMemset},
        {"memset", KinetoRole::DeviceMemset},
        {"gpu_user_annotation", KinetoRole::DeviceAnnotation},
        {"cuda_sync", KinetoRole::DeviceSync},
        {"mtia_ccp_events", KinetoRole::DeviceKernel},
        {"runtime", KinetoRole::HostLaunch},
        {"driver", KinetoRole::HostLaunch},
        {"trace", KinetoRole::Ignored},
        {"overhead", KinetoRole::Ignored},
    }};
    for (const auto& [name, role] : kExact) {
        if (c == name) return role;
    }
    // cuda_runtime, cuda_driver, hip_runtime, mtia_runtime, privateuse1_runtime, xpu_runtime, ...
    if (ends_with(c, "_runtime") || ends_with(c, "_driver")) return KinetoRole::HostLaunch;
    return KinetoRole::HostOp;
}

}  // namespace meshwork::profiler
