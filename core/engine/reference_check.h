// The unsharded reference of a layout (the same model, seed and batches on one rank) and the
// comparison of a sharded run with it: per-step losses and every parameter shard after the
// last step. Relative error of a tensor = ‖a − b‖₂ / ‖b‖₂ over the shard: a norm-wise
// measure, since Adam normalises each element's update and so magnifies the rounding of
// gradients that nearly cancel into a few elements that an element-wise bound would flag.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/engine/params.h"
#include "core/layout/layout.h"

namespace meshwork::engine {

struct ReferenceState {
    std::vector<double> losses;                          // per step
    std::map<std::string, std::vector<float>> params;    // full tensors after the last step
};

struct Mismatch {
    std::string tensor;   // parameter name, or "loss" with the step
    int rank = 0;
    int step = 0;         // for losses
    double rel_error = 0;
    // Found on another rank of an MPI job (`rank`), which prints it: this process knows only
    // that the check failed, not the tensor.
    bool on_other_rank = false;
    [[nodiscard]] std::string to_string() const;
};

// The layout with every axis 1 (same model, batch, sequence and micro-batch size).
Layout reference_layout(const Layout& layout);
// Keeps the full tensors of a one-rank store (the reference's own parameters).
std::map<std::string, std::vector<float>> download_params(Backend& be, ParamStore& store);
// The first parameter shard of `store` that differs from the reference by more than `tol`.
std::optional<Mismatch> compare_params(Backend& be, ParamStore& store, const ReferenceState& ref,
                                       int world_rank, double tol);
std::optional<Mismatch> compare_losses(const std::vector<double>& losses,
                                       const ReferenceState& ref, double tol);

}  // namespace meshwork::engine
