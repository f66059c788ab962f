// The Training dock: every training setting the cost model reads, grouped as an engineer
// thinks of them (Batch; Memory: ZeRO, recompute, offload; Numerics: precision, gradient
// reduction, loss; Kernels; Pipeline: schedule and split). Each change is one undoable edit
// (gui/document/training_edits.h) whose estimate follows at once; a choice that a layout rule
// forbids is closed and its tooltip says why (the rule of core/layout/layout_rules.h or
// pipeline_split.h); a refused change snaps back and says why below the groups.
#pragma once

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QSpinBox;
class QMenu;
class QToolButton;

namespace meshwork::gui {

class LayoutDocument;
class RecomputeControls;
struct ProposedEdit;

class TrainingEditor : public QWidget {
    Q_OBJECT
public:
    explicit TrainingEditor(LayoutDocument* document, QWidget* parent = nullptr);
    [[nodiscard]] QString last_refusal() const;

    // The controls, for tests. Choosers' item data is the layout's spelling.
    [[nodiscard]] QSpinBox* micro_batch_box() const { return micro_batch_; }
    [[nodiscard]] QSpinBox* global_batch_box() const { return global_batch_; }
    [[nodiscard]] QSpinBox* seq_length_box() const { return seq_length_; }
    [[nodiscard]] QDoubleSpinBox* capacity_box() const { return capacity_; }
    [[nodiscard]] QDoubleSpinBox* rank_capacity_box() const { return rank_capacity_; }
    [[nodiscard]] QComboBox* zero_box() const { return zero_; }
    [[nodiscard]] QComboBox* zero_replicas_box() const { return zero_replicas_; }
    [[nodiscard]] QComboBox* fsdp_shards_box() const { return fsdp_shards_; }
    [[nodiscard]] RecomputeControls* recompute() const { return recompute_; }
    [[nodiscard]] QComboBox* offload_optimizer_box() const { return offload_optimizer_; }
    [[nodiscard]] QComboBox* offload_params_box() const { return offload_params_; }
    [[nodiscard]] QSpinBox* offload_activations_box() const { return offload_activations_; }
    [[nodiscard]] QComboBox* dtype_box() const { return dtype_; }
    [[nodiscard]] QComboBox* grad_reduce_box() const { return grad_reduce_; }  // fp32, bf16
    [[nodiscard]] QComboBox* loss_box() const { return loss_; }
    [[nodiscard]] QComboBox* attention_kernel_box() const { return attention_kernel_; }
    [[nodiscard]] QCheckBox* flash_attention_box() const { return flash_; }
    [[nodiscard]] QCheckBox* fused_elementwise_box() const { return fused_; }
    [[nodiscard]] QComboBox* fp8_recipe_box() const { return fp8_recipe_; }
    [[nodiscard]] QComboBox* cuda_graphs_box() const { return cuda_graphs_; }
    [[nodiscard]] QComboBox* schedule_box() const { return schedule_; }
    // Items even, embedding, loss, embedding+loss, and the closed markers uneven and custom
    // that show a split set by the first / last boxes or placed by hand on the canvas.
    [[nodiscard]] QComboBox* split_box() const { return split_; }
    [[nodiscard]] QSpinBox* first_stage_box() const { return first_stage_; }
    [[nodiscard]] QSpinBox* last_stage_box() const { return last_stage_; }

private:
    void build_batch(QFormLayout* form);
    void build_memory(QFormLayout* form);
    void build_numerics(QFormLayout* form);
    void build_kernels(QFormLayout* form);
    void build_pipeline(QFormLayout* form);
    void sync_from_document();
    void sync_memory();
    void sync_numerics();
    void sync_pipeline();
    // Proposes the edit: accepted, it is on the undo stack and every view follows; refused,
    // the controls snap back and the reason shows. An edit that changes nothing is ignored.
    void apply(const ProposedEdit& edit);
    void stage_layers_changed(bool first_changed);
    void show_refusal(const QString& text);

    LayoutDocument* document_;
    QSpinBox* micro_batch_ = nullptr;
    QSpinBox* global_batch_ = nullptr;
    QLabel* micro_batches_ = nullptr;
    QSpinBox* seq_length_ = nullptr;
    QDoubleSpinBox* capacity_ = nullptr;
    QDoubleSpinBox* rank_capacity_ = nullptr;  // training.moe_rank_capacity_factor
    QComboBox* zero_ = nullptr;
    QComboBox* zero_replicas_ = nullptr;  // the divisors of dp that a layout accepts
    QComboBox* fsdp_shards_ = nullptr;    // ZeRO-3's shards: a bf16 copy beside the fp32 master, or the master alone
    RecomputeControls* recompute_ = nullptr;
    QComboBox* offload_optimizer_ = nullptr;
    QComboBox* offload_params_ = nullptr;
    QSpinBox* offload_activations_ = nullptr;
    QComboBox* dtype_ = nullptr;
    QComboBox* grad_reduce_ = nullptr;
    QComboBox* loss_ = nullptr;
    QComboBox* attention_kernel_ = nullptr;
    QCheckBox* flash_ = nullptr;
    QCheckBox* fused_ = nullptr;
    QComboBox* fp8_recipe_ = nullptr;
    QComboBox* cuda_graphs_ = nullptr;
    QToolButton* graph_modules_ = nullptr;  // training.cuda_graph_modules, a checkable menu
    QMenu* graph_modules_menu_ = nullptr;
    QComboBox* schedule_ = nullptr;
    QComboBox* split_ = nullptr;
    QSpinBox* first_stage_ = nullptr;
    QSpinBox* last_stage_ = nullptr;
    QLabel* message_ = nullptr;
    bool syncing_ = false;
};

}  // namespace meshwork::gui
