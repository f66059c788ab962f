#include "core/export/slurm_export.h"

#include <algorithm>

#include "core/export/megatron_export.h"
#include "core/export/torchtitan_config.h"
#include "core/layout/layout_json.h"

namespace meshwork {

namespace {

std::string header(const Layout& l, int nodes, int per_node, int tasks_per_node, bool gpus = true) {
    const auto& m = l.parallel.mesh;
    std::string s = "#!/bin/bash\n";
    s += "# SLURM job for the Meshwork layout '" + l.name + "' (meshwork-cli export --format slurm).\n";
    s += "# " + l.model.name + " on " + std::to_string(l.gpus) + " GPUs: tp " + std::to_string(m.tp) +
         ", pp " + std::to_string(m.pp) + ", dp " + std::to_string(m.dp) + ", cp " +
         std::to_string(m.cp) + ", ep " + std::to_string(m.ep) + ".\n";
    s += "# Add --partition, --account and --time for your site. Arguments after the script name\n"
         "# are passed to the trainer (data, tokenizer, optimizer, checkpoints).\n";
    s += "#SBATCH --job-name=" + (l.name.empty() ? std::string("meshwork") : l.name) + "\n";
    s += "#SBATCH --nodes=" + std::to_string(nodes) + "\n";
    s += "#SBATCH --ntasks-per-node=" + std::to_string(tasks_per_node) + "\n";
    if (gpus) s += "#SBATCH --gpus-per-node=" + std::to_string(per_node) + "\n";
    s += "#SBATCH --exclusive\n";
    s += "#SBATCH --output=%x-%j.out\n\n";
    s += "set -euo pipefail\n\n";
    return s;
}

// The NCCL environment users set on InfiniBand clusters; site-specific ones stay comments.
// `megatron`: the environment the Megatron-LM arguments need, from megatron_command().
std::string nccl_environment(const MegatronCommand* megatron, int zero_stage) {
    std::string s;
    s += "# NCCL: fail fast with a message instead of hanging; log warnings only.\n";
    s += "export TORCH_NCCL_ASYNC_ERROR_HANDLING=1\n";
    s += "export NCCL_DEBUG=WARN\n";
    s += "# export NCCL_SOCKET_IFNAME=ib0      # the interface of the rendezvous traffic\n";
    s += "# export NCCL_IB_HCA=mlx5            # the InfiniBand adapters to use\n";
    s += "# export NCCL_IB_GID_INDEX=3         # RoCE clusters\n";
    if (megatron != nullptr) {
        for (const auto& [name, value, why] : megatron->env) {
            s += "# Megatron-LM " + why + ".\n";
            s += "export " + name + "=" + value + "\n";
        }
        if (zero_stage >= 2) {
            s += "# Megatron-FSDP: validate_args refuses CUDA_DEVICE_MAX_CONNECTIONS=1.\n";
            s += "unset CUDA_DEVICE_MAX_CONNECTIONS\n";
        }
    }
    s += "\n";
    return s;
}

std::string rendezvous() {
    return "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
           "MASTER_PORT=${MASTER_PORT:-29500}\n\n";
}

std::string torchrun_line(int per_node) {
    return "srun --kill-on-bad-exit=1 torchrun \\\n"
           "    --nnodes \"$SLURM_NNODES\" --nproc-per-node " + std::to_string(per_node) + " \\\n"
           "    --rdzv-id \"$SLURM_JOB_ID\" --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\" \\\n";
}

}  // namespace

ExportResult export_slurm(const Layout& l, SlurmTrainer trainer) {
    ExportResult r;
    // A SLURM node is a host (ClusterSpec::allocation_gpus), as megatron_command's torchrun.
    const int per_node = std::max(1, std::min(l.gpus, l.cluster.allocation_gpus()));
    const int nodes = (l.gpus + per_node - 1) / per_node;
    if (l.gpus % per_node != 0) {
        r.lost.push_back(std::to_string(l.gpus) + " GPUs do not fill nodes of " +
                         std::to_string(per_node) + ": SLURM allocates the same GPUs on every node");
    }
    std::string s;
    switch (trainer) {
        case SlurmTrainer::Megatron: {
            const MegatronCommand cmd = megatron_command(l);
            r.lost.insert(r.lost.end(), cmd.lost.begin(), cmd.lost.end());
            s += header(l, nodes, per_node, 1);
            s += nccl_environment(&cmd, l.training.zero_stage);
            s += "# Run from a Megatron-LM checkout (pretrain_gpt.py).\n";
            s += rendezvous();
            s += torchrun_line(per_node);
            s += "    pretrain_gpt.py";
            for (const auto& [flag, value] : cmd.args) s += " \\\n    " + flag + megatron_arg_words(flag, value);
            s += " \\\n    \"$@\"\n";
            break;
        }
        case SlurmTrainer::Torchtitan: {
            const ExportResult toml = export_torchtitan_toml(l);
            r.lost.insert(r.lost.end(), toml.lost.begin(), toml.lost.end());
            s += header(l, nodes, per_node, 1);
            s += nccl_environment(nullptr, 0);
            s += "# The job config travels with the script.\n";
            s += "CONFIG=\"${SLURM_SUBMIT_DIR:-.}/" + l.name + "-$SLURM_JOB_ID.toml\"\n";
            s += "cat > \"$CONFIG\" <<'MESHWORK_TOML'\n" + toml.text + "MESHWORK_TOML\n\n";
            s += rendezvous();
            s += torchrun_line(per_node);
            s += "    -m torchtitan.train --job.config_file \"$CONFIG\" \"$@\"\n";
            break;
        }
        case SlurmTrainer::Meshwork: {
            // Meshwork's engine: one MPI rank per GPU (or emulated CPU rank).
            const bool gpu = l.cluster.gpu.kind != "cpu";
            s += header(l, nodes, per_node, per_node, gpu);
            if (gpu) s += nccl_environment(nullptr, 0);
            s += "# The layout travels with the script.\n";
            s += "LAYOUT=\"${SLURM_SUBMIT_DIR:-.}/" + l.name + "-$SLURM_JOB_ID.json\"\n";
            s += "cat > \"$LAYOUT\" <<'MESHWORK_LAYOUT'\n" + layout_to_json(l).dump(2) + "\nMESHWORK_LAYOUT\n\n";
            s += "# One rank per task; --mpi=pmix suits Open MPI 4 built with PMIx (else: mpirun).\n";
            s += "srun --kill-on-bad-exit=1 --mpi=pmix meshwork-cli run \"$LAYOUT\" --launcher mpi \\\n";
            s += std::string("    --backend ") + (gpu ? "cuda" : "cpu") +
                 " --profile \"${SLURM_SUBMIT_DIR:-.}/" + l.name + "-$SLURM_JOB_ID.sqlite\" \"$@\"\n";
            break;
        }
    }
    r.text = s;
    return r;
}

}  // namespace meshwork
