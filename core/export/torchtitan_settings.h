// What a torchtitan config says about the layout, whichever form it came in (v0.2.x TOML or a
// main config module), and the one place that turns it into a Meshwork layout.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/export/export_types.h"
#include "core/export/torchtitan_facts.h"

namespace meshwork {

struct TorchtitanSettings {
    TorchtitanTarget target = TorchtitanTarget::V02;
    std::string model_name = "llama3";
    std::string flavor = "debugmodel";
    bool fp8 = false;
    // The float8 recipe as written (float8.recipe_name before v0.2, quantize.linear.float8.
    // recipe_name in v0.2.x, recipe_name= of Float8LinearConverter.Config on main); empty:
    // not stated.
    std::string fp8_recipe_name;
    long long replicate = 1, shard = -1, tp = 1, pp = 1, cp = 1, ep = 1, etp = 1;
    std::string reshard = "default";
    bool sequence_parallel = true;
    std::string precision = "bfloat16";
    long long seq_len = 2048;
    long long local_batch = 8;     // sequences per DP rank in one forward (all pp micro-batches)
    long long global_batch = -1;   // sequences per optimizer step; -1: local × dp
    long long pp_micro_batch = 1;  // sequences per pipeline micro-batch
    std::optional<long long> layers_per_stage;
    long long first_less = 1, last_less = 1;
    std::string schedule = "1F1B";
    std::string ac_mode = "selective";  // none, selective, full
    std::string ac_option = "op";       // "op" or a layer interval ("2")
    // Async TP: the TP collectives pipelined with the matmuls by Inductor (v0.2.x
    // parallelism.enable_async_tensor_parallel, job_config.py:357 at v0.2.2; main
    // compile.enable_async_tensor_parallel, config/configs.py:298 at b5bcd76c). Both refuse it
    // unless the model is compiled (compile.enable with "model" in compile.components:
    // distributed/tensor_parallel.py:20-23 at v0.2.2, configs.py:307-312 on main).
    bool async_tp = false;
    std::optional<bool> compile_enable;  // unset: torchtitan's default (off)
    bool compile_model = true;  // "model" in compile.components (the default list has it)
    // training.enable_cpu_offload: FSDP2's CPUOffloadPolicy, parameters, gradients and
    // optimizer states on the host (job_config.py:270-273, models/llama3/infra/parallelize.py:
    // 315-317 at v0.2.2; the same field in main's TrainingConfig).
    bool cpu_offload = false;
    // A main config module deriving from a config function Meshwork does not read (another
    // module's): settings it leaves unset may come from there.
    bool base_unread = false;
    // Where each setting was read ("parallelism.tensor_parallel_degree (line 12)"), for errors.
    std::map<std::string, std::string> where;

    [[nodiscard]] std::string at(const std::string& key) const {
        const auto it = where.find(key);
        return it == where.end() ? key : it->second;
    }
};

// The layout of `s` into r.layout (canonical, not validated), with notes; InputError naming
// the file and setting for what torchtitan or Meshwork cannot take.
void layout_from_torchtitan(const TorchtitanSettings& s, const std::string& file,
                            const ImportOptions& options, ImportResult& r);

}  // namespace meshwork
