// The Training dock built: its groups, rows, tooltips and the edit each control proposes.
#include "gui/training/training_editor.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include "gui/app/theme.h"
#include "gui/document/layout_document.h"
#include "gui/document/training_edits.h"
#include "gui/training/choice_box.h"
#include "gui/training/recompute_controls.h"

namespace meshwork::gui {

namespace {
const TrainingConfig kDefaults{};

QString on_off(bool on) { return on ? QObject::tr("on") : QObject::tr("off"); }

QFormLayout* add_group(QVBoxLayout* column, const QString& title, QWidget* parent) {
    auto* group = new QGroupBox(title, parent);
    auto* form = new QFormLayout(group);
    form->setLabelAlignment(Qt::AlignRight);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setContentsMargins(8, 4, 8, 4);
    form->setVerticalSpacing(4);
    column->addWidget(group);
    return form;
}

// A row of several widgets whose label's mnemonic focuses the first (a label's buddy must
// take focus itself: a container with a focus proxy does not).
// `direction`: side by side (equal shares of the width) or one under another.
void add_row_of(QFormLayout* form, const QString& label, std::initializer_list<QWidget*> widgets, QWidget* parent,
                QBoxLayout::Direction direction = QBoxLayout::LeftToRight) {
    auto* row = new QWidget(parent);
    auto* h = new QBoxLayout(direction, row);
    h->setContentsMargins(0, 0, 0, 0);
    for (auto* w : widgets) h->addWidget(w, 1);
    auto* text = new QLabel(label, parent);
    text->setBuddy(*widgets.begin());
    form->addRow(text, row);
}
}  // namespace

TrainingEditor::TrainingEditor(LayoutDocument* document, QWidget* parent) : QWidget(parent), document_(document) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->setSpacing(0);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Not a Tab stop of its own: Shift+Tab from the first control leaves the dock instead of
    // stopping on the invisible frame (the controls scroll themselves into view, below).
    scroll->setFocusPolicy(Qt::NoFocus);
    auto* content = new QWidget(scroll);
    auto* column = new QVBoxLayout(content);
    column->setContentsMargins(6, 4, 6, 4);
    column->setSpacing(4);
    build_batch(add_group(column, tr("Batch"), content));
    build_memory(add_group(column, tr("Memory"), content));
    build_numerics(add_group(column, tr("Numerics"), content));
    build_kernels(add_group(column, tr("Kernels"), content));
    build_pipeline(add_group(column, tr("Pipeline"), content));
    column->addStretch(1);
    scroll->setWidget(content);
    outer->addWidget(scroll, 1);
    // Tab scrolls the focus into view by itself (QScrollArea::focusNextPrevChild); a
    // mnemonic or a click on a half-hidden row must too. (A mnemonic that reaches the dock
    // while another dock's tab is in front brings it to the front: MainWindow's rule for
    // every dock.)
    connect(qApp, &QApplication::focusChanged, scroll, [scroll, content](QWidget*, QWidget* now) {
        if (!now || !content->isAncestorOf(now)) return;
        scroll->ensureWidgetVisible(now);
        // The groups are as wide as the dock (below); a row never scrolls the dock sideways,
        // which would leave every label clipped on its left.
        scroll->horizontalScrollBar()->setValue(0);
    });
    // The scroll area is never narrower than the groups' minimum: a narrow dock shows all of
    // each row rather than clipping them (the horizontal bar is off).
    scroll->setMinimumWidth(content->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());
    // Below the scrolled groups, so that a refusal shows wherever the change was made.
    message_ = new QLabel(this);
    message_->setWordWrap(true);
    message_->setContentsMargins(8, 4, 8, 6);
    message_->hide();
    outer->addWidget(message_);
    connect(document_, &LayoutDocument::changed, this, &TrainingEditor::sync_from_document);
    sync_from_document();
}

void TrainingEditor::build_batch(QFormLayout* form) {
    micro_batch_ = new QSpinBox(this);
    micro_batch_->setAccessibleName("micro_batch_size");
    micro_batch_->setRange(1, 1 << 16);
    micro_batch_->setKeyboardTracking(false);
    micro_batch_->setToolTip(tr("Sequences per micro-batch on each data-parallel rank (training.micro_batch_size; "
                                "--mbs). Larger ones fill the GEMMs better and hold more activations. Default: %1")
                                 .arg(kDefaults.micro_batch_size));
    form->addRow(tr("&Micro-batch size"), micro_batch_);
    connect(micro_batch_, &QSpinBox::valueChanged, this,
            [this](int n) { if (!syncing_) apply(set_micro_batch_size(document_->layout(), n)); });

    global_batch_ = new QSpinBox(this);
    global_batch_->setAccessibleName("global_batch_size");
    global_batch_->setRange(1, 1 << 24);
    global_batch_->setKeyboardTracking(false);
    global_batch_->setToolTip(tr("Sequences per optimizer step (training.global_batch_size; --gbs): a multiple of "
                                 "dp × micro-batch, the step of the arrows. More micro-batches per pipeline "
                                 "shrink the bubble. Default: dp × micro-batch"));
    micro_batches_ = new QLabel(this);
    micro_batches_->setToolTip(tr("Micro-batches per step in each pipeline: global batch / (dp × micro-batch)"));
    add_row_of(form, tr("&Global batch"), {global_batch_, micro_batches_}, this);
    connect(global_batch_, &QSpinBox::valueChanged, this,
            [this](int n) { if (!syncing_) apply(set_global_batch_size(document_->layout(), n)); });

    seq_length_ = new QSpinBox(this);
    seq_length_->setAccessibleName("seq_length");
    seq_length_->setRange(1, 1 << 20);
    seq_length_->setSingleStep(1024);
    seq_length_->setKeyboardTracking(false);
    seq_length_->setToolTip(tr("Tokens per sequence (training.seq_length; --seq). With cp > 1 a multiple of 2·cp, "
                               "with sequence parallelism of tp per CP rank. Default: %1")
                                .arg(kDefaults.seq_length));
    form->addRow(tr("Se&quence length"), seq_length_);
    connect(seq_length_, &QSpinBox::valueChanged, this,
            [this](int n) { if (!syncing_) apply(set_seq_length(document_->layout(), n)); });

    capacity_ = new QDoubleSpinBox(this);
    capacity_->setAccessibleName("moe_capacity_factor");
    capacity_->setRange(0, 64);
    capacity_->setDecimals(2);
    capacity_->setSingleStep(0.25);
    capacity_->setKeyboardTracking(false);
    capacity_->setSpecialValueText(tr("dropless"));
    // Under it, HybridEP's per-rank token budget (sync-free experts, CUDA-graph capturable).
    rank_capacity_ = new QDoubleSpinBox(this);
    rank_capacity_->setAccessibleName("moe_rank_capacity_factor");
    rank_capacity_->setRange(0, 64);
    rank_capacity_->setDecimals(2);
    rank_capacity_->setSingleStep(0.25);
    rank_capacity_->setKeyboardTracking(false);
    rank_capacity_->setSpecialValueText(tr("no rank budget"));
    rank_capacity_->setPrefix(tr("rank budget "));
    add_row_of(form, tr("E&xpert capacity"), {capacity_, rank_capacity_}, this, QBoxLayout::TopToBottom);
    connect(capacity_, &QDoubleSpinBox::valueChanged, this,
            [this](double f) { if (!syncing_) apply(set_moe_capacity_factor(document_->layout(), f)); });
    connect(rank_capacity_, &QDoubleSpinBox::valueChanged, this,
            [this](double f) { if (!syncing_) apply(set_moe_rank_capacity_factor(document_->layout(), f)); });
}

void TrainingEditor::build_memory(QFormLayout* form) {
    zero_ = new QComboBox(this);
    zero_->setAccessibleName("zero_stage");
    add_choice(zero_, tr("0 · replicated"), "0",
               tr("Every data-parallel rank keeps all weights, gradients and optimizer states (plain DDP)"));
    add_choice(zero_, tr("1 · optimizer states"), "1",
               tr("Optimizer states sharded over the data-parallel ranks (Megatron-LM's distributed optimizer, "
                  "--use-distributed-optimizer)"));
    add_choice(zero_, tr("2 · + gradients"), "2", tr("Optimizer states and gradients sharded (gradients reduce-scattered)"));
    add_choice(zero_, tr("3 · + weights (FSDP)"), "3",
               tr("Optimizer states, gradients and weights sharded; the weights gathered for each pass "
                  "(FSDP, DeepSpeed ZeRO-3)"));
    set_box_tip(zero_, tr("What the data-parallel ranks shard (training.zero_stage; --zero). Changes nothing with "
                         "dp 1. Default: %1, as every production recipe of Megatron-Core, NeMo and torchtitan")
                          .arg(kDefaults.zero_stage));
    connect(zero_, &QComboBox::activated, this, [this](int index) {
        if (!syncing_ && index >= 0) apply(set_zero_stage(document_->layout(), zero_->itemData(index).toInt()));
    });

    // Its items are the replica counts the layout accepts, rebuilt on every sync (sync_memory).
    zero_replicas_ = new QComboBox(this);
    zero_replicas_->setAccessibleName("zero_replicas");
    set_box_tip(zero_replicas_,
                tr("Hybrid sharding (HSDP): the ZeRO state sharded over dp / N ranks, that group replicated N times; "
                   "gradients reduce-scattered in the group, then all-reduced across the replicas "
                   "(training.zero_replicas; --zero-replicas; Megatron-LM's --num-distributed-optimizer-instances, "
                   "torchtitan's data_parallel_replicate_degree). Default: %1, one group over all data-parallel ranks")
                    .arg(kDefaults.zero_replicas));
    // ZeRO-3's parameter shards: which framework's keeping (training.fsdp_fp32_shards).
    fsdp_shards_ = new QComboBox(this);
    fsdp_shards_->setAccessibleName("fsdp_fp32_shards");
    add_choice(fsdp_shards_, tr("bf16 shard + fp32 master"), "off",
               tr("A bf16 shard of each parameter beside its fp32 master, as Megatron-FSDP and DeepSpeed ZeRO-3 "
                  "keep it: 18 bytes a parameter, sharded"));
    add_choice(fsdp_shards_, tr("fp32 shards (PyTorch FSDP)"), "on",
               tr("The fp32 master is the shard, cast to bf16 only for the all-gather, its gradient fp32: PyTorch "
                  "FSDP under mixed precision (torchtitan, llm-foundry), 16 bytes a parameter"));
    set_box_tip(fsdp_shards_, tr("How ZeRO-3 keeps its parameter shards (training.fsdp_fp32_shards; --fsdp-fp32-shards). "
                                 "Default: a bf16 shard beside the fp32 master"));
    // The stage and, under it, its replicas and its shards' keeping: one form row (the dock
    // has no letter left for a row of its own, and they are one decision), the row's mnemonic
    // focusing the stage. Side by side, none showed its choice whole in the dock's width at
    // 1280 × 720 ("1 · optim", "1 replic"). None may widen the dock (its minimum is the groups'
    // minimum): each asks for a few characters and shows the rest in the dock's width.
    for (QComboBox* box : {zero_, zero_replicas_, fsdp_shards_}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(3);
    }
    add_row_of(form, tr("&ZeRO stage"), {zero_, zero_replicas_, fsdp_shards_}, this, QBoxLayout::TopToBottom);
    connect(fsdp_shards_, &QComboBox::activated, this, [this](int index) {
        if (!syncing_ && index >= 0) {
            apply(set_fsdp_fp32_shards(document_->layout(), fsdp_shards_->itemData(index).toString() == "on"));
        }
    });
    connect(zero_replicas_, &QComboBox::activated, this, [this](int index) {
        if (!syncing_ && index >= 0) {
            apply(set_zero_replicas(document_->layout(), zero_replicas_->itemData(index).toInt()));
        }
    });

    recompute_ = new RecomputeControls(
        form, this, [this]() -> const Layout& { return document_->layout(); },
        [this](const ProposedEdit& edit) { apply(edit); });

    auto offload_box = [this](const char* name, const QString& tip) {
        auto* box = new QComboBox(this);
        box->setAccessibleName(name);
        add_choice(box, tr("GPU (none)"), spelt(to_string(Offload::None)), tr("Kept in GPU memory (the default)"));
        add_choice(box, tr("Host memory (cpu)"), spelt(to_string(Offload::Cpu)),
                   tr("Kept in host memory, moved over the cluster's host link each step (ZeRO-Offload)"));
        add_choice(box, tr("NVMe (nvme)"), spelt(to_string(Offload::Nvme)),
                   tr("Kept on NVMe through host memory (ZeRO-Infinity); modelled at the host link's rate"));
        set_box_tip(box, tip);
        return box;
    };
    offload_optimizer_ = offload_box("offload_optimizer",
                                     tr("Optimizer states and the optimizer step on the host (training.offload_optimizer; "
                                        "DeepSpeed's offload_optimizer): GPU memory freed, gradients and weights "
                                        "cross the host link. Needs ZeRO ≥ 1. Default: none"));
    form->addRow(tr("&Optimizer offload"), offload_optimizer_);
    connect(offload_optimizer_, &QComboBox::activated, this, [this](int index) {
        Offload where = Offload::None;
        if (syncing_ || !parse_offload(offload_optimizer_->itemData(index).toString().toStdString(), where)) return;
        apply(set_offload_optimizer(document_->layout(), where));
    });
    offload_params_ = offload_box("offload_params",
                                  tr("ZeRO-3's weight shards on the host, fetched for each pass "
                                     "(training.offload_params; DeepSpeed's offload_param). Needs ZeRO 3. Default: none"));
    form->addRow(tr("&Weight offload"), offload_params_);
    connect(offload_params_, &QComboBox::activated, this, [this](int index) {
        Offload where = Offload::None;
        if (syncing_ || !parse_offload(offload_params_->itemData(index).toString().toStdString(), where)) return;
        apply(set_offload_params(document_->layout(), where));
    });
    offload_activations_ = new QSpinBox(this);
    offload_activations_->setAccessibleName("offload_activation_layers");
    offload_activations_->setKeyboardTracking(false);
    offload_activations_->setSpecialValueText(tr("none"));
    offload_activations_->setSuffix(tr(" layers"));
    offload_activations_->setToolTip(
        tr("Activations of the first N layers copied to host memory after their forward and back before their "
           "backward (training.offload_activation_layers; --offload-activation-layers; Megatron-LM's "
           "--cpu-offloading-num-layers): their HBM freed, the copy over the host link charged where the next "
           "layer does not hide it. Needs pp 1, recompute none, no per-layer CUDA graphs. Default: %1")
            .arg(kDefaults.offload_activation_layers));
    form->addRow(tr("&Activation offload"), offload_activations_);
    connect(offload_activations_, &QSpinBox::valueChanged, this,
            [this](int n) { if (!syncing_) apply(set_offload_activation_layers(document_->layout(), n)); });
}

void TrainingEditor::build_numerics(QFormLayout* form) {
    dtype_ = new QComboBox(this);
    dtype_->setAccessibleName("dtype");
    add_choice(dtype_, "fp32", spelt(to_string(DType::Fp32)), tr("Weights, activations and GEMMs in fp32"));
    add_choice(dtype_, "tf32", spelt(to_string(DType::Tf32)), tr("fp32 storage, GEMMs on the tensor cores' tf32 path"));
    add_choice(dtype_, "bf16", spelt(to_string(DType::Bf16)),
               tr("bf16 weights, activations and GEMMs; fp32 master weights and optimizer states"));
    add_choice(dtype_, "fp16", spelt(to_string(DType::Fp16)), tr("fp16 mixed precision with fp32 master weights"));
    add_choice(dtype_, tr("fp8 (Transformer Engine)"), spelt(to_string(DType::Fp8)),
               tr("Transformer Engine fp8: the GEMMs at the fp8 peak, their inputs cast to fp8 and kept so for "
                  "the backward; bf16 weights with fp32 master copies; attention and the other activations in "
                  "bf16"));
    add_choice(dtype_, tr("fp4 (NVFP4)"), spelt(to_string(DType::Fp4)),
               tr("Transformer Engine NVFP4 (Blackwell): the GEMMs at the fp4 peak, their operands cast to e2m1 "
                  "with a scale per 16 values (a Hadamard transform before the weight-gradient GEMM) and kept "
                  "so for the backward; bf16 weights with fp32 master copies; attention in bf16"));
    set_box_tip(dtype_, tr("The training type (training.dtype; --dtype). Default: the GPU's fastest of bf16 and "
                          "fp32 (bf16 on tensor-core GPUs)"));
    form->addRow(tr("&Precision"), dtype_);
    connect(dtype_, &QComboBox::activated, this, [this](int index) {
        DType d = DType::Bf16;
        if (syncing_ || !parse_dtype(dtype_->itemData(index).toString().toStdString(), d)) return;
        apply(set_dtype(document_->layout(), d));
    });

    // Next to the precision it refines (it matters only with fp8).
    fp8_recipe_ = new QComboBox(this);
    fp8_recipe_->setAccessibleName("fp8_recipe");
    add_choice(fp8_recipe_, tr("Tensor-wise"), spelt(to_string(Fp8Recipe::Tensorwise)),
               tr("One scale per tensor from its own amax (Megatron-LM's tensorwise, Transformer Engine's current "
                  "scaling, torchao's tensorwise): each cast reads its tensor twice"));
    add_choice(fp8_recipe_, tr("Delayed"), spelt(to_string(Fp8Recipe::Delayed)),
               tr("One scale per tensor from earlier steps' amax history (Megatron-LM's delayed, its default): the "
                  "same GEMMs, a cast that reads its tensor once and fuses into the norm"));
    add_choice(fp8_recipe_, tr("Block-wise"), spelt(to_string(Fp8Recipe::Blockwise)),
               tr("1×128 and 128×128 blocks as DeepSeek-V3 trains (Megatron-LM's blockwise): slower GEMMs on Hopper"));
    add_choice(fp8_recipe_, tr("MXFP8"), spelt(to_string(Fp8Recipe::Mxfp8)),
               tr("1×32 blocks with power-of-two scales, applied by Blackwell's tensor cores (Megatron-LM's mxfp8)"));
    add_choice(fp8_recipe_, tr("Row-wise"), spelt(to_string(Fp8Recipe::Rowwise)),
               tr("One scale per row (torchao's and torchtitan's rowwise): the per-tensor GEMM rate, plus a "
                  "transposed bf16 copy of every operand for the backward"));
    set_box_tip(fp8_recipe_, tr("How fp8 GEMM operands are scaled, read with fp8 precision (training.fp8_recipe; "
                               "--fp8-recipe): the GEMM efficiency of the GPU's published kernel table. Default: %1")
                                .arg(QString::fromStdString(to_string(kDefaults.fp8_recipe))));
    form->addRow(tr("FP&8 recipe"), fp8_recipe_);
    connect(fp8_recipe_, &QComboBox::activated, this, [this](int index) {
        Fp8Recipe r = Fp8Recipe::Tensorwise;
        if (syncing_ || !parse_fp8_recipe(fp8_recipe_->itemData(index).toString().toStdString(), r)) return;
        apply(set_fp8_recipe(document_->layout(), r));
    });

    grad_reduce_ = new QComboBox(this);
    grad_reduce_->setAccessibleName("grad_reduce_dtype");
    add_choice(grad_reduce_, "fp32", "fp32",
               tr("Gradients accumulated and reduced in fp32: 4 bytes per parameter (Megatron-LM's default)"));
    add_choice(grad_reduce_, "bf16", "bf16",
               tr("Gradients accumulated and reduced in bf16: 2 bytes per parameter and half the data-parallel "
                  "traffic (--grad-reduce-in-bf16)"));
    set_box_tip(grad_reduce_, tr("The gradients' type in bf16 and fp8 training (training.grad_reduce_in_bf16; "
                                "--grad-reduce-dtype). Default: fp32"));
    form->addRow(tr("Gradient re&duction"), grad_reduce_);
    connect(grad_reduce_, &QComboBox::activated, this, [this](int index) {
        bool bf16 = false;
        if (syncing_ || !parse_grad_reduce_dtype(grad_reduce_->itemData(index).toString().toStdString(), bf16)) return;
        apply(set_grad_reduce_in_bf16(document_->layout(), bf16));
    });

    loss_ = new QComboBox(this);
    loss_->setAccessibleName("cross_entropy");
    add_choice(loss_, tr("Vocab-parallel, fused"), spelt(to_string(CrossEntropy::VocabParallel)),
               tr("Megatron-LM's vocabulary-parallel cross entropy: one fp32 copy of the logits beside them, worked on in place"));
    add_choice(loss_, tr("Upcast to fp32"), spelt(to_string(CrossEntropy::Upcast)),
               tr("PyTorch's cross_entropy(logits.float()) as torchtitan calls it: an fp32 copy, an fp32 "
                  "log-softmax and two fp32 gradients of the logits"));
    add_choice(loss_, tr("Transformer Engine"), spelt(to_string(CrossEntropy::Te)),
               tr("Transformer Engine's parallel cross entropy from TE 2.18 on (--cross-entropy-fusion-impl te): "
                  "an fp32 gradient beside the logits"));
    add_choice(loss_, tr("Transformer Engine, in place"), spelt(to_string(CrossEntropy::TeInPlace)),
               tr("Transformer Engine's parallel cross entropy before TE 2.18, as the Megatron-Bridge performance "
                  "recipes ran it: the gradient written over the logits"));
    add_choice(loss_, tr("flash-attn, fused"), spelt(to_string(CrossEntropy::FlashAttn)),
               tr("flash-attn's fused cross entropy on the 16-bit logits, as llm-foundry's MPT runs it: the "
                  "gradient in the logits' dtype beside them"));
    set_box_tip(loss_, tr("How the loss over the logits is computed (training.cross_entropy): memory and time of "
                         "the last stage. Default: vocab-parallel"));
    form->addRow(tr("Lo&ss"), loss_);
    connect(loss_, &QComboBox::activated, this, [this](int index) {
        CrossEntropy c = CrossEntropy::VocabParallel;
        if (syncing_ || !parse_cross_entropy(loss_->itemData(index).toString().toStdString(), c)) return;
        apply(set_cross_entropy(document_->layout(), c));
    });
}

void TrainingEditor::build_kernels(QFormLayout* form) {
    // No mnemonic: every letter of "Flash attention" already opens a menu or another setting
    // of this window (tst_training mnemonics_are_unique); Tab reaches it within this group.
    flash_ = new QCheckBox(tr("Flash attention"), this);
    flash_->setAccessibleName("flash_attention");
    flash_->setToolTip(tr("Fused attention kernels (FlashAttention, cuDNN): no s×s scores kept, attention at the "
                          "fused kernels' efficiency. Off: the scores stored as 2022-era runs did "
                          "(training.flash_attention; --flash-attention). Default: %1")
                           .arg(on_off(kDefaults.flash_attention)));
    connect(flash_, &QCheckBox::toggled, this,
            [this](bool on) { if (!syncing_) apply(set_flash_attention(document_->layout(), on)); });
    fused_ = new QCheckBox(tr("Fused eleme&nt-wise"), this);
    fused_->setAccessibleName("fused_elementwise");
    fused_->setToolTip(tr("Norms, rotary embedding, activation function and residual adds in fused kernels, as "
                          "Megatron-LM, Transformer Engine and torch.compile run them. Off: PyTorch eager, one "
                          "kernel per op with fp32 intermediates (training.fused_elementwise). Default: %1")
                           .arg(on_off(kDefaults.fused_elementwise)));
    // Two switches side by side: their own texts carry the mnemonics.
    auto* row = new QWidget(this);
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(flash_);
    h->addWidget(fused_);
    h->addStretch(1);
    form->addRow(row);
    connect(fused_, &QCheckBox::toggled, this,
            [this](bool on) { if (!syncing_) apply(set_fused_elementwise(document_->layout(), on)); });

    attention_kernel_ = new QComboBox(this);
    attention_kernel_->setAccessibleName("attention_kernel");
    add_choice(attention_kernel_, tr("Transformer Engine"), spelt(to_string(AttentionKernel::Fused)),
               tr("Transformer Engine's fused attention, as Megatron-LM runs it: cuDNN, or FlashAttention-3 on "
                  "Hopper"));
    add_choice(attention_kernel_, tr("PyTorch SDPA"), spelt(to_string(AttentionKernel::Sdpa)),
               tr("PyTorch's scaled_dot_product_attention, as torchtitan runs it: FlashAttention-2's kernels on "
                  "Hopper and Ampere, cuDNN on Blackwell"));
    set_box_tip(attention_kernel_, tr("Which fused attention kernel the framework runs (training.attention_kernel; "
                                     "--attention-kernel): the published kernel table the estimate takes. "
                                     "Default: %1")
                                      .arg(QString::fromStdString(to_string(kDefaults.attention_kernel))));
    // No mnemonic: every letter of the window has one already (tst_training
    // mnemonics_are_unique); Tab reaches it after the two switches above. A label without a
    // buddy, so that no Alt key is claimed.
    form->addRow(new QLabel(tr("Attention kernel"), this), attention_kernel_);
    connect(attention_kernel_, &QComboBox::activated, this, [this](int index) {
        AttentionKernel k = AttentionKernel::Fused;
        if (syncing_ || !parse_attention_kernel(attention_kernel_->itemData(index).toString().toStdString(), k)) return;
        apply(set_attention_kernel(document_->layout(), k));
    });

    cuda_graphs_ = new QComboBox(this);
    cuda_graphs_->setAccessibleName("cuda_graphs");
    add_choice(cuda_graphs_, tr("None"), spelt(to_string(CudaGraphs::None)),
               tr("Every kernel launched from the host: a layer whose kernels are shorter than their launches "
                  "leaves the GPU waiting"));
    add_choice(cuda_graphs_, tr("Per layer"), spelt(to_string(CudaGraphs::PerLayer)),
               tr("One graph per layer (Megatron-LM's --cuda-graph-impl local or transformer_engine); a dropless "
                  "MoE layer's experts stay outside, after their token-count synchronisation"));
    add_choice(cuda_graphs_, tr("Full iteration"), spelt(to_string(CudaGraphs::FullIteration)),
               tr("The whole forward-backward as one graph (--cuda-graph-impl full_iteration); dropless MoE "
                  "experts still cannot be captured"));
    set_box_tip(cuda_graphs_, tr("CUDA-graph capture (training.cuda_graphs; --cuda-graphs): removes the host's "
                                "launch cost of what is captured. Default: %1")
                                 .arg(QString::fromStdString(to_string(kDefaults.cuda_graphs))));
    form->addRow(tr("CUDA-graph &kernels"), cuda_graphs_);
    connect(cuda_graphs_, &QComboBox::activated, this, [this](int index) {
        CudaGraphs g = CudaGraphs::None;
        if (syncing_ || !parse_cuda_graphs(cuda_graphs_->itemData(index).toString().toStdString(), g)) return;
        apply(set_cuda_graphs(document_->layout(), g));
    });

    // What per-layer graphs capture: Megatron-LM's --cuda-graph-modules; none checked is the
    // whole layer.
    graph_modules_ = new QToolButton(this);
    graph_modules_->setAccessibleName("cuda_graph_modules");
    graph_modules_->setPopupMode(QToolButton::InstantPopup);
    graph_modules_->setToolButtonStyle(Qt::ToolButtonTextOnly);
    graph_modules_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    graph_modules_->setToolTip(tr("What per-layer CUDA graphs capture (training.cuda_graph_modules; "
                                  "--cuda-graph-modules): the checked regions, the rest of the layer launched "
                                  "from the host; none checked: the whole layer"));
    graph_modules_menu_ = new QMenu(graph_modules_);
    for (const auto& [name, module] : kGraphModuleNames) {
        auto* action = graph_modules_menu_->addAction(QString::fromLatin1(name));
        action->setCheckable(true);
        connect(action, &QAction::toggled, this, [this] {
            if (syncing_) return;
            GraphModules chosen;
            for (QAction* a : graph_modules_menu_->actions()) {
                if (a->isChecked()) add_graph_module(a->text().toStdString(), chosen);
            }
            apply(set_cuda_graph_modules(document_->layout(), chosen));
        });
    }
    graph_modules_->setMenu(graph_modules_menu_);
    // Every other letter of the window is taken by a mnemonic (tst_gui_training mnemonics_are_unique).
    form->addRow(tr("Captured modules (&J)"), graph_modules_);
}

void TrainingEditor::build_pipeline(QFormLayout* form) {
    schedule_ = new QComboBox(this);
    schedule_->setAccessibleName("schedule");
    add_choice(schedule_, tr("1F1B"), spelt(to_string(Schedule::OneFOneB)),
               tr("One forward, one backward: at most pp micro-batches in flight (the default)"));
    add_choice(schedule_, tr("GPipe"), spelt(to_string(Schedule::GPipe)),
               tr("Every forward, then every backward: all micro-batches' activations in flight"));
    add_choice(schedule_, tr("Interleaved 1F1B"), spelt(to_string(Schedule::Interleaved)),
               tr("vpp model chunks per rank: the bubble shrinks by vpp, more point-to-point traffic"));
    set_box_tip(schedule_, tr("The pipeline schedule (training.schedule; --schedule); interleaved exactly when "
                             "vpp > 1 (Virtual stages, Parallelism dock). Default: 1F1B"));
    form->addRow(tr("Sched&ule"), schedule_);
    connect(schedule_, &QComboBox::activated, this, [this](int index) {
        Schedule s = Schedule::OneFOneB;
        if (syncing_ || !parse_schedule(schedule_->itemData(index).toString().toStdString(), s)) return;
        apply(set_schedule(document_->layout(), s));
    });

    split_ = new QComboBox(this);
    split_->setAccessibleName("pipeline_split");
    add_choice(split_, tr("Even"), kSplitEven,
               tr("Layers as even as they go over the pp·vpp chunks, the end chunks lighter when they do not divide"));
    add_choice(split_, tr("Embedding counted"), split_data(true, false),
               tr("The embedding counted as a layer: the first chunk one layer lighter "
                  "(Megatron-LM's --account-for-embedding-in-pipeline-split)"));
    add_choice(split_, tr("Loss counted"), split_data(false, true),
               tr("The LM head and loss counted as a layer: the last chunk one layer lighter "
                  "(--account-for-loss-in-pipeline-split)"));
    add_choice(split_, tr("Embedding and loss counted"), split_data(true, true),
               tr("Both counted: the first and last chunks one layer lighter each (Llama 3 405B's split)"));
    add_choice(split_, tr("Uneven first / last"), kSplitUneven, {});
    add_choice(split_, tr("Placed by hand"), kSplitCustom, {});
    set_box_tip(split_, tr("How the transformer layers are dealt over the pipeline stages "
                          "(placement.layers_per_stage). Default: even"));
    form->addRow(tr("Spl&it"), split_);
    connect(split_, &QComboBox::activated, this, [this](int index) {
        if (syncing_ || index < 0) return;
        const QString choice = split_->itemData(index).toString();
        PipelineSplitRule rule;
        if (choice != kSplitEven) {
            rule.kind = PipelineSplitRule::Kind::Accounted;
            rule.embedding = choice.contains("embedding");
            rule.loss = choice.contains("loss");
        }
        apply(set_pipeline_split(document_->layout(), rule));
    });

    first_stage_ = new QSpinBox(this);
    first_stage_->setAccessibleName("first_stage_layers");
    first_stage_->setPrefix(tr("first "));
    first_stage_->setKeyboardTracking(false);
    last_stage_ = new QSpinBox(this);
    last_stage_->setAccessibleName("last_stage_layers");
    last_stage_->setPrefix(tr("last "));
    last_stage_->setKeyboardTracking(false);
    add_row_of(form, tr("Stage la&yers"), {first_stage_, last_stage_}, this);
    connect(first_stage_, &QSpinBox::valueChanged, this, [this] { if (!syncing_) stage_layers_changed(true); });
    connect(last_stage_, &QSpinBox::valueChanged, this, [this] { if (!syncing_) stage_layers_changed(false); });
}

QString TrainingEditor::last_refusal() const { return message_->isVisible() ? message_->text() : QString(); }

void TrainingEditor::stage_layers_changed(bool first_changed) {
    const Layout& l = document_->layout();
    const int pp = l.parallel.mesh.pp;
    const int layers = l.model.num_layers;
    const auto per_rank = layers_per_pipeline_rank(l);
    if (pp < 2 || per_rank.empty()) return;
    int first = first_stage_->value();
    int last = last_stage_->value();
    // With two ranks the other one takes the rest.
    if (pp == 2) (first_changed ? last : first) = layers - (first_changed ? first : last);
    PipelineSplitRule rule{PipelineSplitRule::Kind::Uneven, false, false, first, last};
    auto edit = set_pipeline_split(l, rule);
    if (!edit.refused.empty() && pp > 2) {
        // The middle ranks cannot absorb the change: the other end rank does, as when a layer
        // is moved from the first rank to the last.
        const int middle = per_rank[1] * (pp - 2);
        (first_changed ? rule.last : rule.first) = layers - middle - (first_changed ? first : last);
        auto moved = set_pipeline_split(l, rule);
        if (moved.refused.empty()) edit = std::move(moved);
    }
    apply(edit);
}

void TrainingEditor::apply(const ProposedEdit& edit) {
    if (!document_->has_layout()) return;
    if (edit.refused.empty() && edit.layout == document_->layout()) {
        sync_from_document();  // re-chose the current value
        return;
    }
    const auto outcome = document_->apply(edit);
    // The undo text names the setting; the refusal says what was tried and why not.
    show_refusal(outcome.accepted ? QString()
                                  : tr("%1 refused: %2").arg(QString::fromStdString(edit.description), outcome.reason));
    if (!outcome.accepted) sync_from_document();  // snap back
}

void TrainingEditor::show_refusal(const QString& text) {
    message_->setVisible(!text.isEmpty());
    message_->setText(text);
    message_->setStyleSheet(QString("color: %1").arg(view_colours().error.name()));
}

}  // namespace meshwork::gui
