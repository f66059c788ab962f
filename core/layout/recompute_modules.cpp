#include "core/layout/recompute_modules.h"

namespace meshwork {

std::string to_string(RecomputeModule m) {
    switch (m) {
        case RecomputeModule::CoreAttn: return "core_attn";
        case RecomputeModule::MoeAct: return "moe_act";
        case RecomputeModule::Layernorm: return "layernorm";
        case RecomputeModule::MlaUpProj: return "mla_up_proj";
        case RecomputeModule::Mlp: return "mlp";
        case RecomputeModule::Moe: return "moe";
        case RecomputeModule::SharedExperts: return "shared_experts";
    }
    return "?";
}

bool parse_recompute_module(const std::string& text, RecomputeModule& out) {
    for (RecomputeModule m : kAllRecomputeModules) {
        if (text == to_string(m)) {
            out = m;
            return true;
        }
    }
    return false;
}

std::string recompute_module_names() {
    std::string s;
    for (RecomputeModule m : kAllRecomputeModules) s += (s.empty() ? "" : ", ") + to_string(m);
    return s;
}

bool parse_recompute_module_list(const std::string& text, std::vector<RecomputeModule>& out,
                                 std::string& bad) {
    out.clear();
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = text.find(',', start);
        const std::size_t end = comma == std::string::npos ? text.size() : comma;
        std::string name = text.substr(start, end - start);
        const auto first = name.find_first_not_of(' ');
        const auto last = name.find_last_not_of(' ');
        name = first == std::string::npos ? "" : name.substr(first, last - first + 1);
        RecomputeModule m{};
        if (!parse_recompute_module(name, m)) {
            bad = name;
            return false;
        }
        out.push_back(m);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return true;
}

std::string join_recompute_modules(const std::vector<RecomputeModule>& modules, const char* separator) {
    std::string s;
    for (RecomputeModule m : modules) s += (s.empty() ? "" : separator) + to_string(m);
    return s;
}

RecomputeSet::RecomputeSet(bool selective, const std::vector<RecomputeModule>& modules) {
    if (!selective) return;
    if (modules.empty()) {
        bits_ = bit(RecomputeModule::CoreAttn);
        return;
    }
    for (RecomputeModule m : modules) bits_ |= bit(m);
}

}  // namespace meshwork
