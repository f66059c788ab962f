// A Megatron-LM command line (torchrun ... pretrain_gpt.py ARGS, python pretrain_gpt.py ARGS
// or the bare ARGS) -> Layout. Unknown and conflicting arguments are errors naming
// "argv[K] --flag"; known arguments that do not affect the layout are listed as ignored.
#pragma once

#include <string>

#include "core/export/export_types.h"

namespace meshwork {

ImportResult import_megatron(const std::string& text, const std::string& file,
                             const ImportOptions& options);

}  // namespace meshwork
