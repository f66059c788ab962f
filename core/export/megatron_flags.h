// The Megatron-LM (and torchrun) flags that import-args knows. Flags that describe the
// layout are read by megatron_import.cpp; the flags below are known not to affect it (data,
// optimizer, logging, checkpoints, kernels) and are accepted and listed as ignored. A flag
// in neither list is an error: nothing on an imported command line is silently dropped.
#pragma once

#include <string>

namespace meshwork {

// Why `flag` ("--lr") does not affect the layout; nullptr when the flag is not in the list.
const char* megatron_ignored_flag_reason(const std::string& flag);

struct LauncherOption {
    const char* name;
    bool takes_value;
};
// A torchrun / torch.distributed.run option; nullptr when unknown. Underscore and dash
// spellings are both listed (torchrun accepts both).
const LauncherOption* torchrun_option(const std::string& flag);

}  // namespace meshwork
