// What the Hugging Face config.json readers (hf_config.cpp, hf_hybrid_config.cpp,
// hf_gemma4_config.cpp) share: the bounds on sizes, one value each, and the test for a key
// that is stated (present and not null).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace meshwork::hf_limits {

// Limits that no real model exceeds; larger values are refused as absurd (hostile input).
constexpr std::int64_t kMaxWidth = 1 << 20;  // hidden, ffn, head dims
constexpr std::int64_t kMaxLayers = 10000;
constexpr std::int64_t kMaxHeads = 1 << 14;
constexpr std::int64_t kMaxVocab = 1 << 24;
constexpr std::int64_t kMaxPositions = 1ll << 26;
constexpr std::int64_t kMaxExperts = 1 << 16;

// A key the config states: present and not null (transformers writes unset options as null).
inline bool stated(const nlohmann::json& config, const char* key) {
    return config.contains(key) && !config.at(key).is_null();
}

}  // namespace meshwork::hf_limits
