#include "core/export/exporter.h"

#include "core/export/deepspeed_config.h"
#include "core/export/megatron_export.h"
#include "core/export/slurm_export.h"
#include "core/export/torchtitan_config.h"
#include "core/layout/layout_json.h"

namespace meshwork {

ExportResult export_layout(const Layout& layout, ExportFormat format, const ExportOptions& options) {
    switch (format) {
        case ExportFormat::Megatron: return export_megatron(layout);
        case ExportFormat::DeepSpeed: return export_deepspeed(layout);
        case ExportFormat::Torchtitan: return export_torchtitan(layout);
        case ExportFormat::TorchtitanToml: return export_torchtitan_toml(layout);
        case ExportFormat::Slurm: return export_slurm(layout, options.slurm_trainer);
        case ExportFormat::Layout: return {layout_to_json(layout).dump(2) + "\n", {}};
    }
    return {};
}

}  // namespace meshwork
