// The Megatron-LM (and torchrun) flags that import-args knows. Flags that describe the
// layout are read by megatron_import*.cpp; the flags below are known not to affect it (data,
// optimizer, logging, checkpoints, kernels) and are accepted and listed as ignored. A flag
// in neither list is an error: nothing on an imported command line is silently dropped.
#pragma once

#include <string>

namespace meshwork {

// Why `flag` ("--lr") does not affect the layout; nullptr when the flag is not in the list.
// Besides the flags listed by hand with their reasons, every other flag of Megatron-LM's
// current pretrain argparse (megatron_upstream_flags.inc, generated from the sources by
// tests/upstream/megatron_argparse_flags.py) is known, unless it changes the layout in a way the
// import does not read (megatron_unread_layout_flag).
const char* megatron_ignored_flag_reason(const std::string& flag);

// Why a Megatron-LM flag that changes the layout is not imported (hybrid context parallelism,
// heterogeneous layers); nullptr otherwise.
const char* megatron_unread_layout_flag(const std::string& flag);

// Where Megatron-LM defines `flag` ("megatron/training/arguments.py:2994"); nullptr when
// its current argparse has no such flag.
const char* megatron_upstream_flag_source(const std::string& flag);

// For a flag no release or fork import-args knows defines: the word of its name that says it
// may describe the layout ("parallel" in --tensor-parallel-size, a misspelt
// --tensor-model-parallel-size); nullptr when its name says nothing of the kind
// (--wandb-name, --valid-num-workers), which the import then lists as ignored with a warning.
const char* megatron_layout_like_word(const std::string& flag);

struct LauncherOption {
    const char* name;
    bool takes_value;
};
// A torchrun / torch.distributed.run option; nullptr when unknown. Underscore and dash
// spellings are both listed (torchrun accepts both).
const LauncherOption* torchrun_option(const std::string& flag);

}  // namespace meshwork
