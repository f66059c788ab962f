#include "core/search/search_options.h"

#include "core/common/error.h"

namespace meshwork::search {

namespace {

constexpr const char* kFile = "<flags>";
constexpr const char* kField = "--fix";

int parse_positive(const std::string& key, const std::string& value, int min_value) {
    std::size_t used = 0;
    int v = 0;
    try {
        v = std::stoi(value, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != value.size()) {
        throw InputError(kFile, kField, key + "=" + value + ": '" + value + "' is not an integer");
    }
    if (v < min_value) {
        throw InputError(kFile, kField,
                         key + "=" + value + ": must be at least " + std::to_string(min_value));
    }
    return v;
}

bool parse_bool(const std::string& key, const std::string& value) {
    if (value == "1" || value == "true" || value == "on" || value == "yes") return true;
    if (value == "0" || value == "false" || value == "off" || value == "no") return false;
    throw InputError(kFile, kField, key + "=" + value + ": expected on or off");
}

}  // namespace

const char* fix_keys() {
    return "tp, pp, dp, cp, ep, etp, vpp, mbs, zero, schedule, recompute, sp";
}

void apply_fix(const std::string& assignment, FixedSettings& f) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == assignment.size()) {
        throw InputError(kFile, kField,
                         "'" + assignment + "' is not KEY=VALUE (keys: " + fix_keys() + ")");
    }
    const std::string key = assignment.substr(0, eq);
    const std::string value = assignment.substr(eq + 1);
    if (key == "tp")
        f.tp = parse_positive(key, value, 1);
    else if (key == "pp")
        f.pp = parse_positive(key, value, 1);
    else if (key == "dp")
        f.dp = parse_positive(key, value, 1);
    else if (key == "cp")
        f.cp = parse_positive(key, value, 1);
    else if (key == "ep")
        f.ep = parse_positive(key, value, 1);
    else if (key == "etp")
        f.etp = parse_positive(key, value, 1);
    else if (key == "vpp")
        f.vpp = parse_positive(key, value, 1);
    else if (key == "mbs")
        f.mbs = parse_positive(key, value, 1);
    else if (key == "zero") {
        const int z = parse_positive(key, value, 0);
        if (z > 3)
            throw InputError(kFile, kField, "zero=" + value + ": ZeRO stages are 0, 1, 2, 3");
        f.zero = z;
    } else if (key == "schedule") {
        Schedule s{};
        if (!parse_schedule(value, s)) {
            throw InputError(kFile, kField,
                             "schedule=" + value + ": expected gpipe, 1f1b or interleaved");
        }
        f.schedule = s;
    } else if (key == "recompute") {
        Recompute r{};
        if (!parse_recompute(value, r)) {
            throw InputError(kFile, kField,
                             "recompute=" + value + ": expected none, selective, full or selective-op");
        }
        f.recompute = r;
    } else if (key == "sp") {
        f.sequence_parallel = parse_bool(key, value);
    } else {
        throw InputError(kFile, kField, "unknown key '" + key + "' (keys: " + fix_keys() + ")");
    }
}

}  // namespace meshwork::search
