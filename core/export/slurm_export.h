// Layout -> SLURM batch script: the allocation (nodes, one task per node for torchrun or one
// per GPU for MPI, GPUs per node), the NCCL environment, and srun launching Megatron-LM,
// torchtitan or Meshwork's own engine (meshwork-cli run --launcher mpi).
#pragma once

#include "core/export/export_types.h"
#include "core/layout/layout.h"

namespace meshwork {

ExportResult export_slurm(const Layout& layout, SlurmTrainer trainer);

}  // namespace meshwork
