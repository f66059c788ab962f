// What Meshwork relies on about torchtitan, in one place: the pinned commits, the model
// flavors, the converter names, and how torchtitan turns the data-parallel degrees into
// DDP/FSDP/HSDP and an expert mesh. docs/export.md lists each fact with file:line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/layout/layout.h"

namespace meshwork {

// The torchtitan a config is written for.
enum class TorchtitanTarget {
    Main,  // current main: a Python module returning Trainer.Config (--module/--config)
    V02,   // v0.2.0-v0.2.2: the TOML job config (--job.config_file)
};

// The commits the facts were read at (docs/export.md).
inline constexpr const char* kTorchtitanMainCommit = "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a";
inline constexpr const char* kTorchtitanV022Commit = "73a0e6979dd10b6b1904098eb3c8f62c18ab87ce";

// A torchtitan model flavor: either the same layers, widths, heads, experts and vocabulary
// as a bundled preset, or (flavors no preset has) the Hugging Face config.json of the
// flavor's values in torchtitan's registry; and the shipped main config function of it.
struct TorchtitanFlavor {
    const char* preset;       // "" when the flavor is described by `hf_config`
    const char* name;         // torchtitan/models/<name>
    const char* flavor;       // key of the model's flavor table
    const char* main_config;  // function of torchtitan/models/<name>/config_registry.py; "" for none
    bool moe;
    const char* hf_config = nullptr;  // the flavor's values as a config.json, when no preset
    bool on_main = true;              // torchtitan main has the model and flavor
    bool on_v02 = true;               // v0.2.x has the model and flavor
    const char* source = "";          // where the flavor's values are
};
// The flavor `flavor` of torchtitan model `name`; nullptr when torchtitan has none.
const TorchtitanFlavor* find_torchtitan_flavor(const std::string& name, const std::string& flavor);
// The model of a flavor: its preset, or its config.json read as a model named after it.
ModelSpec torchtitan_flavor_model(const TorchtitanFlavor& f);
// The flavor that is the layout's model at `target`: by preset, else by architecture (every
// ModelSpec field but the name, family, position limit and dropouts); nullptr for none.
const TorchtitanFlavor* torchtitan_flavor_of_layout(const Layout& layout, TorchtitanTarget target);
// The flavor of a preset; nullptr when torchtitan has none.
const TorchtitanFlavor* torchtitan_flavor_of_preset(const std::string& preset);
// The flavor whose shipped main config function is `function` of torchtitan/models/`name`.
const TorchtitanFlavor* torchtitan_flavor_of_main_config(const std::string& name,
                                                         const std::string& function);
// The preset of a torchtitan model name and flavor; empty when none.
std::string preset_of_torchtitan_flavor(const std::string& name, const std::string& flavor);

// v0.2.x model.converters names (components/quantization/float8.py register_model_converter).
inline constexpr const char* kV02Float8Linear = "quantize.linear.float8";
inline constexpr const char* kV02Float8GroupedMm = "quantize.grouped_mm.float8";

// How the data-parallel ranks are written: replicate × shard = dp.
struct TorchtitanDataParallel {
    int replicate = 1;
    int shard = 1;
    std::string reshard;  // fsdp_reshard_after_forward: "always", "never" or "" (not written)
    int etp = 1;          // expert_tensor_parallel_degree (V02 only; main has no ETP axis)
};

// What torchtitan at `target` would run for the layout's DP/ZeRO/EP: pure replication where
// torchtitan allows it, else FSDP/HSDP, with every change from the layout appended to `lost`.
// `layout` is canonical.
TorchtitanDataParallel plan_torchtitan_data_parallel(const Layout& layout, TorchtitanTarget target,
                                                     std::vector<std::string>& lost);

// The ZeRO stage torchtitan's degrees amount to: sharded parameters (dp_shard > 1) are ZeRO-3,
// or ZeRO-2 when they stay unsharded between forward and backward; reshard "default" means
// "never" under pipeline parallelism (distributed/fsdp.py). Replication is ZeRO-0.
int torchtitan_zero_stage(long long shard, const std::string& reshard, int pp);

// Why torchtitan at `target` cannot build these degrees; empty when it can.
std::string torchtitan_mesh_problem(TorchtitanTarget target, long long replicate, long long shard,
                                    int tp, int pp, int cp, int ep, int etp);

// torchtitan's name of a pipeline schedule (torch.distributed.pipelining).
std::string torchtitan_schedule_name(Schedule schedule);

// torchtitan's pipeline split (distributed/pipeline_parallel.py, the same in v0.2.2 and main):
// stages = ceil((layers + first_less + last_less) / layers_per_stage), or pp × (1, or 2 for a
// multi-stage schedule) without layers_per_stage; the effective layers are dealt out evenly
// with the remainder to the first stages, and the first and last stage give up first_less
// and last_less of theirs to the embedding and the output. `error` says why torchtitan
// refuses the settings (then `layers` is empty).
struct TorchtitanSplit {
    std::vector<int> layers;
    std::string error;
};
TorchtitanSplit torchtitan_split(int layers, int pp,
                                 const std::optional<long long>& layers_per_stage,
                                 long long first_less, long long last_less,
                                 bool multi_stage_schedule);

// pipeline_parallel_layers_per_stage and the first/last-stage reductions that make torchtitan
// build the layout's split. When none does, the reason goes to `lost` and the keys of the
// split torchtitan builds without them are returned (written explicitly, so that export of
// the re-imported file is the same text); `written` is false only when even that fails.
struct TorchtitanStages {
    bool written = false;
    int layers_per_stage = 0, first_less = 0, last_less = 0;
};
TorchtitanStages torchtitan_stages(const Layout& layout, std::vector<std::string>& lost);

// What neither target expresses: rank order, explicit expert placement, unfused attention,
// capacity factor, a schedule without pipeline.
// Whether the exports write async TP (v0.2.x parallelism.enable_async_tensor_parallel, main
// compile.enable_async_tensor_parallel) and compile the model, which async TP needs: the
// layout's TP communication overlap with sequence parallelism and tp > 1.
bool torchtitan_writes_async_tp(const Layout& layout);
// Whether an export enables torch.compile: for the fused element-wise kernels the layout
// states (training.fused_elementwise), and always under async TP, which needs it.
bool torchtitan_writes_compile(const Layout& layout);
void torchtitan_common_lost(const Layout& layout, std::vector<std::string>& lost);

// `s` as a double-quoted string literal, escaping quote, backslash and newline: the same
// text for a TOML basic string and a Python string literal, the two forms the exports write.
// Whether the layout's offload is torchtitan's training.enable_cpu_offload: parameters,
// gradients and optimizer states on the CPU under ZeRO-3 (FSDP2's CPUOffloadPolicy).
bool torchtitan_cpu_offload(const Layout& layout);
std::string torchtitan_quoted(const std::string& s);

}  // namespace meshwork
