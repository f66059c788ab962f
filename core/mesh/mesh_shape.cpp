#include "core/mesh/mesh_shape.h"

#include <algorithm>

namespace meshwork {

namespace {

// Calls visit(name) for each '-'-separated name; false when any visit returns false.
template <class Visit>
bool for_each_axis(std::string_view order, Visit visit) {
    std::size_t at = 0;
    while (at <= order.size()) {
        std::size_t end = order.find('-', at);
        if (end == std::string_view::npos) end = order.size();
        if (!visit(order.substr(at, end - at))) return false;
        at = end + 1;
    }
    return true;
}

int axis_bit(std::string_view name) {
    if (name == "tp") return 1;
    if (name == "cp") return 2;
    if (name == "ep") return 4;
    if (name == "dp") return 8;
    if (name == "pp") return 16;
    return 0;
}

}  // namespace

bool is_axis_order(std::string_view order) {
    int seen = 0;
    const bool names_ok = for_each_axis(order, [&](std::string_view name) {
        const int bit = axis_bit(name);
        if (bit == 0 || (seen & bit) != 0) return false;
        seen |= bit;
        return true;
    });
    return names_ok && seen == 31;
}

std::optional<MeshStrides> mesh_strides(const MeshShape& shape) {
    if (!is_axis_order(shape.order) || !shape.experts_fold()) return std::nullopt;
    MeshStrides out;
    const int edp = shape.expert_data_parallel();
    int dense_stride = 1, expert_stride = 1;
    for_each_axis(shape.order, [&](std::string_view name) {
        // Dense mesh: ep is not an axis of dense layers (size 1). Expert mesh: tp becomes
        // etp, cp folds away (size 1), dp becomes edp.
        int dense_size = 1, expert_size = 1;
        if (name == "tp") {
            out.tp = dense_stride;
            out.etp = expert_stride;
            dense_size = shape.tp;
            expert_size = shape.etp;
        } else if (name == "cp") {
            out.cp = dense_stride;
            dense_size = shape.cp;
        } else if (name == "ep") {
            out.ep = expert_stride;
            expert_size = shape.ep;
        } else if (name == "dp") {
            out.dp = dense_stride;
            out.edp = expert_stride;
            dense_size = shape.dp;
            expert_size = edp;
        } else {  // pp
            out.pp = dense_stride;
            dense_size = shape.pp;
            expert_size = shape.pp;
        }
        dense_stride *= std::max(1, dense_size);
        expert_stride *= std::max(1, expert_size);
        return true;
    });
    return out;
}

std::string axis_order_error(const std::string& order) {
    return "'" + order + "' is not an order of the axes tp, cp, ep, dp, pp joined by '-'";
}

}  // namespace meshwork
