// Layout -> Megatron-LM (Megatron-Core, pretrain_gpt.py) command-line arguments.
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "core/export/export_types.h"
#include "core/layout/layout.h"

namespace meshwork {

struct MegatronCommand {
    int nnodes = 1;          // torchrun --nnodes
    int nproc_per_node = 1;  // torchrun --nproc-per-node
    // The environment the arguments need (NAME, value, why): validate_args asserts
    // CUDA_DEVICE_MAX_CONNECTIONS=1 for TP or CP > 1 before Blackwell, and Megatron-FSDP
    // asserts it is not 1 (docs/upstream-megatron.md).
    std::vector<std::array<std::string, 3>> env;
    // pretrain_gpt.py arguments in order; the value is empty for store_true flags.
    std::vector<std::pair<std::string, std::string>> args;
    std::vector<std::string> lost;  // what the arguments cannot express
};

MegatronCommand megatron_command(const Layout& layout);
// The command as text: a comment header, then torchrun ... pretrain_gpt.py with one
// argument per line (backslash continuations); meshwork-cli import-args reads it back.
ExportResult export_megatron(const Layout& layout);
// One argument list as shell words, quoted where the shell would split or expand them.
std::string shell_quote(const std::string& word);
// " VALUE" of one argument as shell words: empty for a store_true flag; one quoted word,
// or for a flag that takes several values (nargs "+": --recompute-modules, whose value
// megatron_command keeps space-separated) one word each.
std::string megatron_arg_words(const std::string& flag, const std::string& value);

}  // namespace meshwork
