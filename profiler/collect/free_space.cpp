#include "profiler/collect/free_space.h"

#include <filesystem>
#include <system_error>

#include "core/common/error.h"

namespace meshwork::profiler {

std::optional<std::uintmax_t> free_bytes_for(const std::string& path) {
    const std::filesystem::path target(path);
    const auto folder = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    std::error_code ec;
    const auto space = std::filesystem::space(folder, ec);
    if (ec) return std::nullopt;
    return space.available;
}

void check_free_space(const std::string& path, std::optional<std::uintmax_t> available) {
    if (!available || *available >= kMinProfileFreeBytes) return;
    throw RuntimeError(path + ": only " + std::to_string(*available >> 20) + " MiB free on its disk; a " +
                       "profile needs at least " + std::to_string(kMinProfileFreeBytes >> 20) +
                       " MiB to start (free some space or write the profile elsewhere)");
}

}  // namespace meshwork::profiler
