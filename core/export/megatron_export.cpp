#include "core/export/megatron_export.h"

#include "core/model/hf_hybrid_config.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/export/canonical_layout.h"
#include "core/export/moe_layer_pattern.h"
#include "core/export/pipeline_layout.h"
#include "core/export/stage_split.h"
#include "core/layout/pipeline_split.h"
#include "core/schedule/pipeline_schedule.h"

namespace meshwork {

namespace {

std::string str(long long v) { return std::to_string(v); }

std::string number(double v) {
    std::string s = std::to_string(v);
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

// A number as printf's %g with enough digits to read back the same double (1e-05, 1e-06).
std::string number_exact(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    std::string s = buf;
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (std::strtod(buf, nullptr) == v) return buf;
    }
    return s;
}

class ArgList {
public:
    void flag(const std::string& name) { args_.emplace_back(name, ""); }
    void value(const std::string& name, const std::string& v) { args_.emplace_back(name, v); }
    void value(const std::string& name, long long v) { args_.emplace_back(name, str(v)); }
    std::vector<std::pair<std::string, std::string>> take() { return std::move(args_); }

private:
    std::vector<std::pair<std::string, std::string>> args_;
};

void model_args(const ModelSpec& m, ArgList& a, std::vector<std::string>& lost) {
    a.value("--num-layers", m.num_layers);
    a.value("--hidden-size", m.hidden_size);
    a.value("--ffn-hidden-size", m.ffn_hidden_size);
    a.value("--num-attention-heads", m.num_heads);
    if (m.num_kv_heads != m.num_heads && !m.uses_mla) {
        a.flag("--group-query-attention");
        a.value("--num-query-groups", m.num_kv_heads);
    }
    if (!m.uses_mla && m.head_dim * m.num_heads != m.hidden_size) {
        a.value("--kv-channels", m.head_dim);
    }
    a.value("--max-position-embeddings", m.max_position_embeddings);
    // Megatron takes the vocabulary from the tokenizer; --vocab-size states it for
    // NullTokenizer and for import-args (a real run sets --tokenizer-type/--tokenizer-model).
    a.value("--vocab-size", m.vocab_size);
    a.value("--normalization", m.norm == NormKind::RmsNorm ? "RMSNorm" : "LayerNorm");
    if (m.mlp == MlpKind::Gated) {
        // SwiGLU, or gpt-oss's clamped quick GELU with +1 on the linear half
        // (examples/gptoss/02_train.sh:148-152); Megatron-LM has no tanh-GELU GLU.
        if (m.glu_activation == "quick_gelu") {
            a.flag("--quick-geglu");
        } else {
            a.flag("--swiglu");
            if (m.glu_activation == "gelu_tanh") {
                lost.push_back("the GeGLU MLP (tanh GELU, Gemma): Megatron-LM has SwiGLU and quick-GELU GLUs only "
                               "(written as --swiglu)");
            }
        }
        if (m.glu_linear_offset != 0) a.value("--glu-linear-offset", number_exact(m.glu_linear_offset));
        if (m.glu_clamp > 0) a.value("--activation-func-clamp-value", number_exact(m.glu_clamp));
    }
    const bool yarn = m.rope.scaling == "yarn";
    a.value("--position-embedding-type",
            m.learned_position_embeddings ? "learned_absolute" : (yarn && !m.uses_mla ? "yarn" : "rope"));
    if (!m.learned_position_embeddings) {
        // --rotary-base is an int (arguments.py:2418); Megatron's default 10000 is not
        // Llama 3's 500000, so it is always written.
        if (m.rope.theta == static_cast<double>(static_cast<long long>(m.rope.theta))) {
            a.value("--rotary-base", static_cast<long long>(m.rope.theta));
        } else {
            lost.push_back("a fractional RoPE base: --rotary-base takes an integer");
        }
        if (m.rope.percent != 1.0) a.value("--rotary-percent", number(m.rope.percent));
        if (m.uses_mla && !yarn && !m.rope.scaling.empty() && m.rope.scaling != "none") {
            // MLA's rotary embedding is YaRN or plain RoPE (multi_latent_attention.py:181-199 at
            // d98e8a64): it reads neither --use-rope-scaling nor an interpolation factor.
            lost.push_back("the " + m.rope.scaling + " RoPE scaling of multi-latent attention: Megatron-LM's MLA "
                           "runs YaRN or unscaled RoPE (written unscaled)");
        } else if (m.rope.scaling == "llama3") {
            a.flag("--use-rope-scaling");
            a.value("--rope-scaling-factor", number(m.rope.factor));
        } else if (yarn) {
            a.value("--rotary-scaling-factor", number(m.rope.factor));
        } else if (m.rope.scaling == "linear") {
            if (m.rope.factor == static_cast<double>(static_cast<long long>(m.rope.factor))) {
                a.value("--rotary-seq-len-interpolation-factor", static_cast<long long>(m.rope.factor));
            } else {
                lost.push_back("a fractional linear RoPE scaling factor: Megatron-LM takes an integer");
            }
        }
        // MLA takes yarn unless told otherwise (MLATransformerConfig.rope_type), and refuses
        // rope with the RoPE fusion that is on by default (transformer_config.py:3345-3346).
        if (m.uses_mla && !yarn) {
            a.value("--rope-type", "rope");
            a.flag("--no-rope-fusion");
        }
    }
    a.value("--norm-epsilon", number_exact(m.norm_eps));
    // Megatron-LM's dropouts default to 0.1; the model's own (0 for Llama-family configs).
    a.value("--hidden-dropout", number_exact(m.hidden_dropout));
    a.value("--attention-dropout", number_exact(m.attention_dropout));
    // MLA's Q and KV latent norms are --qk-layernorm in Megatron-LM (DeepSeek has them).
    if (m.qk_norm || m.uses_mla) a.flag("--qk-layernorm");
    // Local attention (docs/upstream-megatron.md): a window of W keys is W - 1 to the left
    // of the query and none to the right (transformer/utils.py's sliding-window mask), full
    // blocks every N-th layer (--window-attn-skip-freq N). Chunked attention has no flag;
    // Llama 4's full blocks are its NoPE blocks, which --no-rope-freq N states.
    if (m.sliding_window > 0) {
        a.value("--window-size", str(m.sliding_window - 1) + ",0");
        if (m.global_attention_every > 0) a.value("--window-attn-skip-freq", m.global_attention_every);
    }
    if (m.attention_chunk > 0) {
        lost.push_back("chunked attention (" + str(m.attention_chunk) +
                       "-token chunks): Megatron-LM has no chunked-attention flag (its blocks attend fully)");
        if (m.global_attention_every > 0) {
            if (m.num_layers % m.global_attention_every == 0) {
                a.value("--no-rope-freq", m.global_attention_every);
            } else {
                lost.push_back("the NoPE blocks of a chunked model: --no-rope-freq needs the layer count to divide by " +
                               str(m.global_attention_every));
            }
        }
    }
    // gpt-oss's sinks: one learned logit per head (DotProductAttention.softmax_offset).
    if (m.attention_sinks) a.value("--softmax-type", "learnable");
    if (m.attn_logit_softcap > 0) {
        lost.push_back("attention logit soft-cap " + number(m.attn_logit_softcap) + ": Megatron-LM has no flag for it");
    }
    if (m.final_logit_softcap > 0) {
        lost.push_back("final logit soft-cap " + number(m.final_logit_softcap) + ": Megatron-LM has no flag for it");
    }
    if (m.global_attention.head_dim > 0) {
        // Gemma 4: --kv-channels and --num-query-groups are one value for every layer.
        lost.push_back("the full-attention blocks' own geometry (head dim " + str(m.global_attention.head_dim) +
                       (m.global_attention.num_kv_heads > 0 ? ", " + str(m.global_attention.num_kv_heads) + " KV heads" : "") +
                       (m.global_attention.values_are_keys ? ", keys reused as values" : "") +
                       "): Megatron-LM's --kv-channels and --num-query-groups hold one for every layer (the "
                       "sliding blocks' are written)");
    }
    if (m.sandwich_norms) {
        lost.push_back("the norms on the attention's and the MLP's outputs (Gemma's four norms a block): "
                       "Megatron-LM's GPT layer has two");
    }
    if (m.per_layer_input.width > 0) {
        lost.push_back("per-layer input embeddings (" + str(m.per_layer_input.width) +
                       " wide per block): Megatron-LM's GPT model has none");
    }
    if (m.kv_shared_layers > 0) {
        lost.push_back("the last " + str(m.kv_shared_layers) + " blocks' shared keys and values" +
                       (m.double_wide_shared_mlp ? " and their twice-as-wide MLP" : "") +
                       ": Megatron-LM's layers each project their own");
    }
    if (m.mtp_layers > 0) a.value("--mtp-num-layers", m.mtp_layers);
    if (!m.tie_embeddings) a.flag("--untie-embeddings-and-output-weights");
    if (!m.linear_bias) {
        a.flag("--disable-bias-linear");
        if (m.qkv_bias) a.flag("--add-qkv-bias");
    } else if (!m.qkv_bias) {
        lost.push_back("biases on every linear layer except Q/K/V: Megatron-LM has no flag for it");
    }
    if (m.is_hybrid()) {
        // Megatron-LM's hybrid model (pretrain_mamba.py): one sublayer per pattern letter.
        const std::string pattern = hybrid_pattern(m);
        if (!pattern.empty() && pattern.find_first_of("GS") == std::string::npos) {
            a.flag("--is-hybrid-model");
            a.value("--hybrid-override-pattern", pattern);
            if (m.has_mixer(MixerKind::Mamba2)) {
                a.value("--mamba-num-heads", m.mamba.num_heads);
                a.value("--mamba-head-dim", m.mamba.head_dim);
                a.value("--mamba-state-dim", m.mamba.state_dim);
                a.value("--mamba-num-groups", m.mamba.num_groups);
            }
            if (!m.mlp_activation.empty()) a.flag("--squared-relu");
        } else {
            lost.push_back("per-block kinds (Gated DeltaNet or sparse attention blocks, or blocks with both a mixer "
                           "and an MLP in a hybrid pattern): not written as Megatron-LM flags yet");
        }
    }
    if (m.uses_mla) {
        a.flag("--multi-latent-attention");
        if (m.mla.q_lora_rank > 0) a.value("--q-lora-rank", m.mla.q_lora_rank);
        a.value("--kv-lora-rank", m.mla.kv_lora_rank);
        a.value("--qk-head-dim", m.mla.qk_nope_head_dim);
        a.value("--qk-pos-emb-head-dim", m.mla.qk_rope_head_dim);
        a.value("--v-head-dim", m.mla.v_head_dim);
    }
    if (m.is_moe()) {
        a.value("--num-experts", m.moe.num_experts);
        a.value("--moe-router-topk", m.moe.top_k);
        a.value("--moe-ffn-hidden-size", m.moe.expert_ffn_hidden);
        if (m.moe.shared_ffn_hidden > 0) {
            a.value("--moe-shared-expert-intermediate-size", m.moe.shared_ffn_hidden);
        }
        if (m.moe.shared_expert_gate) a.flag("--moe-shared-expert-gate");
        // TransformerConfig refuses expert bias with the default softmax scores.
        const std::string score = m.moe.router_bias && m.moe.router_score == "softmax" ? "sigmoid" : m.moe.router_score;
        if (m.moe.router_bias && m.moe.router_score == "softmax") {
            lost.push_back("expert bias with softmax router scores: Megatron-LM needs sigmoid (written)");
        }
        if (score != "softmax") a.value("--moe-router-score-function", score);
        if (m.moe.router_bias) a.flag("--moe-router-enable-expert-bias");
        const std::string freq = moe_layer_freq_value(m);
        if (!freq.empty()) a.value("--moe-layer-freq", freq);
    }
}

void parallel_args(const Layout& l, ArgList& a, std::vector<std::string>& lost) {
    const auto& m = l.parallel.mesh;
    a.value("--tensor-model-parallel-size", m.tp);
    a.value("--pipeline-model-parallel-size", m.pp);
    if (m.cp > 1) a.value("--context-parallel-size", m.cp);
    if (l.model.is_moe() || m.ep > 1) a.value("--expert-model-parallel-size", m.ep);
    // Megatron defaults the expert TP size to the dense TP size (validate_args), Meshwork's
    // default for dense models is 1: say it whenever the two conventions would disagree.
    if (l.model.is_moe() || m.etp != 1) a.value("--expert-tensor-parallel-size", m.etp);
    if (l.parallel.sequence_parallel && m.tp > 1) a.flag("--sequence-parallel");
    if (l.model.is_moe()) {
        // Megatron-LM's default dispatcher is allgather (transformer_config.py:891 at d98e8a64),
        // the layout's alltoall: always written.
        a.value("--moe-token-dispatcher-type", to_string(l.parallel.moe_dispatcher));
        if (l.parallel.moe_dispatcher == MoeDispatcher::Flex) {
            a.value("--moe-flex-dispatcher-backend", to_string(l.parallel.moe_flex_backend));
        }
        if (l.parallel.moe_a2a_overlap) a.flag("--overlap-moe-expert-parallel-comm");
    }
    if (l.parallel.tp_comm_overlap != TpOverlap::None && l.parallel.sequence_parallel && m.tp > 1) {
        // Transformer Engine's userbuffers with its default methods (module/base.py:350-359):
        // what Meshwork calls "ring"; "pipe" for every collective needs a
        // --tp-comm-overlap-cfg file of per-GEMM methods.
        a.flag("--tp-comm-overlap");
        if (l.parallel.tp_comm_overlap == TpOverlap::Pipe) {
            lost.push_back("TP overlap 'pipe' for every collective: --tp-comm-overlap runs "
                           "Transformer Engine's default methods (read back as 'ring'); "
                           "per-GEMM methods need a --tp-comm-overlap-cfg file");
        }
    }
    if (m.order == kTpPpDpAxisOrder) {
        a.flag("--use-tp-pp-dp-mapping");
    } else if (m.order != kDefaultAxisOrder) {
        lost.push_back("rank order " + m.order +
                       ": Megatron-LM has tp-cp-ep-dp-pp and (--use-tp-pp-dp-mapping) "
                       "tp-cp-ep-pp-dp only");
    }

    const int vpp = l.parallel.vpp;
    const auto split = l.stage_layers();
    const SplitShape shape = classify_split(split);
    if (vpp > 1 && shape.even) {
        a.value("--num-layers-per-virtual-pipeline-stage", shape.middle);
    } else if (vpp == 1 && m.pp > 1 && !shape.even && shape.ends_form && shape.first > 0 && shape.last > 0) {
        a.value("--decoder-first-pipeline-num-layers", shape.first);
        a.value("--decoder-last-pipeline-num-layers", shape.last);
    } else if (m.pp > 1 && !shape.even) {
        // Megatron-LM's own split rules where one builds this split (core/layout/
        // pipeline_split.h); vpp then goes as --num-virtual-stages-per-pipeline-rank, the
        // form arguments.py:954-956 needs with uneven ranks.
        const MegatronSplitForm form = megatron_split_form(split, l.model.num_layers, m.pp, vpp);
        if (form.kind == MegatronSplitForm::Kind::Accounted) {
            if (form.embedding) a.flag("--account-for-embedding-in-pipeline-split");
            if (form.loss) a.flag("--account-for-loss-in-pipeline-split");
        } else if (form.kind == MegatronSplitForm::Kind::Uneven) {
            if (form.first) a.value("--decoder-first-pipeline-num-layers", *form.first);
            if (form.last) a.value("--decoder-last-pipeline-num-layers", *form.last);
        } else {
            // Any other split: the layout string places every chunk's layers (chunk = vpp
            // rank · pp + pp rank, as Meshwork orders them).
            a.value("--pipeline-model-parallel-layout", format_pipeline_layout(split, l.model.mtp_layers));
        }
        if (form.kind != MegatronSplitForm::Kind::None && vpp > 1) {
            a.value("--num-virtual-stages-per-pipeline-rank", vpp);
        }
    }
    switch (l.training.schedule) {
        case Schedule::GPipe:
            if (m.pp > 1) lost.push_back("GPipe schedule: Megatron-LM runs 1F1B or interleaved 1F1B");
            else lost.push_back("GPipe schedule (no effect with pp 1): Megatron-LM has no GPipe");
            break;
        case Schedule::OneFOneB:
            if (vpp > 1) lost.push_back("1F1B with virtual stages: Megatron-LM interleaves them");
            break;
        case Schedule::Interleaved: {
            if (vpp == 1) lost.push_back("interleaved schedule without virtual stages (vpp 1)");
            // Megatron's default group is pp micro-batches and it refuses a smaller last
            // group (pipeline_parallel/schedules.py:1172-1181): say the group Meshwork runs.
            const int group = interleaved_group_size(m.pp, l.num_micro_batches());
            if (vpp > 1 && group > m.pp) a.value("--microbatch-group-size-per-virtual-pipeline-stage", group);
            break;
        }
    }
}

void training_args(const Layout& l, ArgList& a, std::vector<std::string>& lost) {
    const auto& t = l.training;
    if (!t.fused_elementwise) {
        lost.push_back("eager element-wise kernels: Megatron-LM runs fused norms, rotary embedding "
                       "and activation kernels");
    }
    if (t.attention_kernel == AttentionKernel::Sdpa) {
        lost.push_back("attention_kernel sdpa: Megatron-LM runs Transformer Engine's fused attention "
                       "(read back as fused)");
    }
    if (t.cross_entropy == CrossEntropy::Upcast) {
        lost.push_back("cross_entropy upcast: Megatron-LM computes its vocabulary-parallel cross "
                       "entropy on one fp32 copy of the logits");
    }
    if (t.cross_entropy == CrossEntropy::FlashAttn) {
        lost.push_back("cross_entropy flash-attn: Megatron-LM computes its vocabulary-parallel cross "
                       "entropy on one fp32 copy of the logits (read back as vocab-parallel)");
    }
    if (t.cross_entropy == CrossEntropy::Te || t.cross_entropy == CrossEntropy::TeInPlace) {
        // training/arguments.py:1697-1702 at d98e8a64 refuses --cross-entropy-fusion-impl te.
        lost.push_back("cross_entropy " + to_string(t.cross_entropy) + ": Megatron-LM refuses Transformer "
                       "Engine's cross entropy; written as its vocabulary-parallel cross entropy (read back "
                       "as vocab-parallel)");
    }
    a.value("--micro-batch-size", t.micro_batch_size);
    a.value("--global-batch-size", t.global_batch_size);
    a.value("--seq-length", t.seq_length);
    switch (t.recompute) {
        case Recompute::None: break;
        case Recompute::Selective:
            a.value("--recompute-granularity", "selective");
            // nargs "+" (the config's argparse factory, training/argument_utils.py:143-146 at
            // d98e8a64): one word per module; absent = Megatron's default, core_attn.
            if (!t.recompute_modules.empty()) a.value("--recompute-modules", join_recompute_modules(t.recompute_modules, " "));
            break;
        case Recompute::SelectiveOp:
            // Megatron-LM's selective modules (--recompute-modules) are whole submodules;
            // nothing saves every other matmul.
            a.value("--recompute-granularity", "selective");
            lost.push_back("op-level selective checkpointing (selective-op): written as Megatron-LM's "
                           "selective recompute of core attention, which keeps more activations");
            break;
        case Recompute::Full:
            a.value("--recompute-granularity", "full");
            if (t.recompute_num_layers == 0) {
                // uniform with units of one layer: every layer's input is checkpointed.
                a.value("--recompute-method", "uniform");
                a.value("--recompute-num-layers", 1);
            } else {
                a.value("--recompute-method", "block");
                a.value("--recompute-num-layers", t.recompute_num_layers);
            }
            break;
    }
    if (t.fsdp_fp32_shards) {
        lost.push_back("fsdp_fp32_shards: Megatron-FSDP keeps a bf16 parameter shard beside its fp32 main "
                       "weights (read back off)");
    }
    switch (t.zero_stage) {
        case 0: break;
        case 1: a.flag("--use-distributed-optimizer"); break;
        default:
            // Megatron-FSDP: optim_grads is ZeRO-2, optim_grads_params ZeRO-3; it accepts
            // only its own checkpoint format (validate_args).
            a.flag("--use-megatron-fsdp");
            a.value("--data-parallel-sharding-strategy",
                    t.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
            a.flag("--use-distributed-optimizer");
            a.value("--ckpt-format", "fsdp_dtensor");
            break;
    }
    // Hybrid sharding: N copies of the distributed optimizer (or of Megatron-FSDP's shards,
    // mcore_fsdp_adapter.py:346), each over dp·cp/N ranks.
    if (t.zero_stage >= 1 && t.zero_replicas > 1) a.value("--num-distributed-optimizer-instances", t.zero_replicas);
    // Data-parallel overlap, off in Megatron-LM unless asked for (arguments.py:3121, 3148 at
    // d98e8a64); the parameter gather overlaps only with the distributed optimizer.
    if (l.parallel.overlap_grad_reduce) a.flag("--overlap-grad-reduce");
    if (l.parallel.overlap_grad_reduce && l.parallel.overlap_param_gather && t.zero_stage >= 1) {
        a.flag("--overlap-param-gather");
    }
    switch (t.dtype) {
        case DType::Bf16: a.flag("--bf16"); break;
        case DType::Fp16: a.flag("--fp16"); break;
        case DType::Fp8: {
            a.flag("--bf16");
            a.value("--fp8-format", "hybrid");
            // Every recipe is written, delayed scaling (Megatron-LM's default,
            // transformer_config.py:594-596 at d98e8a64) too, so the job does not depend on a
            // default. moe_act and layernorm recompute refuse delayed scaling (:2000-2006);
            // current (tensor-wise) scaling is what the Megatron-Bridge recipes that recompute
            // them run ("fp8_cs").
            bool refuses_delayed = false;
            if (t.recompute == Recompute::Selective) {
                for (RecomputeModule mod : t.recompute_modules) {
                    refuses_delayed = refuses_delayed || mod == RecomputeModule::MoeAct || mod == RecomputeModule::Layernorm;
                }
            }
            // Megatron-LM has no row-wise recipe (core/enums.py:12-19 at d98e8a64): the run is
            // written with current per-tensor scaling, and the difference named.
            if (t.fp8_recipe == Fp8Recipe::Rowwise) {
                a.value("--fp8-recipe", "tensorwise");
                lost.push_back("fp8 recipe rowwise (torchao's): Megatron-LM has delayed, tensorwise, mxfp8 and "
                               "blockwise only; written as tensorwise");
            } else if (t.fp8_recipe == Fp8Recipe::Delayed && refuses_delayed) {
                a.value("--fp8-recipe", "tensorwise");
                lost.push_back("fp8 recipe delayed: Megatron-LM refuses it with moe_act or layernorm recomputation "
                               "(transformer_config.py:2000-2006); written as tensorwise");
            } else {
                a.value("--fp8-recipe", to_string(t.fp8_recipe));
            }
            break;
        }
        case DType::Fp4:
            // NVFP4 (transformer_config.py:671-681 at d98e8a64), the recipe written so the job
            // does not depend on a default.
            a.flag("--bf16");
            a.value("--fp4-format", "e2m1");
            a.value("--fp4-recipe", "nvfp4");
            break;
        case DType::Fp32: break;
        case DType::Tf32:
            lost.push_back("tf32: Megatron-LM trains fp32 without a flag for TF32 matmuls");
            break;
    }
    if (t.grad_reduce_in_bf16 && (t.dtype == DType::Bf16 || quantized_gemms(t.dtype))) {
        a.flag("--grad-reduce-in-bf16");
    }
    a.value("--attention-backend", t.flash_attention ? "auto" : "unfused");
    if (t.offload_optimizer != Offload::None || t.offload_params != Offload::None) {
        lost.push_back("DeepSpeed-style offload of optimizer states or parameters: not written for Megatron-LM");
    }
    // moe_act recompute works on the grouped expert MLP only (transformer_config.py:1964-1967),
    // which is also how the cost model prices the routed experts.
    if (l.model.is_moe() && t.recompute == Recompute::Selective) {
        for (RecomputeModule mod : t.recompute_modules) {
            if (mod == RecomputeModule::MoeAct) {
                a.flag("--moe-grouped-gemm");
                break;
            }
        }
    }
    if (l.model.is_moe() && t.moe_rank_capacity_factor > 0) {
        a.value("--moe-expert-rank-capacity-factor", number(t.moe_rank_capacity_factor));
    }
    if (l.model.is_moe() && t.moe_capacity_factor > 0) {
        a.value("--moe-expert-capacity-factor", number(t.moe_capacity_factor));
    }
    // CUDA graphs (--cuda-graph-impl, transformer_config.py:1075-1088 at d98e8a64). Per layer
    // with MCore's own implementation; a dropless MoE layer cannot be captured whole
    // (moe/README.md:514), so such a model captures attention and the router, as the README
    // advises. The full iteration needs the NaN check off (arguments.py:1235-1237).
    // Activation offload: --cpu-offloading-num-layers alone turns it on (arguments.py:1950-1951
    // at d98e8a64; cpu_offloading and cpu_offloading_activations have no flag of their own,
    // arguments.py:2320-2321, and activations are offloaded by default, model_parallel_config.py:471).
    if (t.offload_activation_layers > 0) {
        a.value("--cpu-offloading-num-layers", std::to_string(t.offload_activation_layers));
    }
    switch (t.cuda_graphs) {
        case CudaGraphs::None: break;
        case CudaGraphs::PerLayer:
            a.value("--cuda-graph-impl", "local");
            if (!t.cuda_graph_modules.whole_layer()) {
                a.value("--cuda-graph-modules", join_graph_modules(t.cuda_graph_modules, " "));
            } else if (l.model.is_moe() && t.moe_capacity_factor <= 0) {
                a.value("--cuda-graph-modules", "attn moe_router");
            }
            break;
        case CudaGraphs::FullIteration:
            a.value("--cuda-graph-impl", "full_iteration");
            a.flag("--no-check-for-nan-in-loss-and-grad");
            break;
    }
}

}  // namespace

std::string megatron_arg_words(const std::string& flag, const std::string& value) {
    if (value.empty()) return "";
    if (flag != "--recompute-modules" && flag != "--cuda-graph-modules") return " " + shell_quote(value);
    std::string out;
    std::size_t start = 0;
    while (start < value.size()) {
        std::size_t end = value.find(' ', start);
        if (end == std::string::npos) end = value.size();
        if (end > start) out += " " + shell_quote(value.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::string shell_quote(const std::string& w) {
    if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789-_./:=,+@%") == std::string::npos) {
        return w;
    }
    std::string out = "'";
    for (char c : w) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

MegatronCommand megatron_command(const Layout& layout) {
    const Layout l = canonical_layout(layout);
    MegatronCommand cmd;
    ArgList a;
    model_args(l.model, a, cmd.lost);
    parallel_args(l, a, cmd.lost);
    training_args(l, a, cmd.lost);
    if (!l.placement.experts_per_ep_rank.empty()) {
        cmd.lost.push_back("expert placement: Megatron-LM gives each EP rank a contiguous block");
    }
    cmd.args = a.take();
    const auto& mesh = l.parallel.mesh;
    if ((mesh.tp > 1 || mesh.cp > 1) && l.training.zero_stage < 2) {
        cmd.env.push_back({"CUDA_DEVICE_MAX_CONNECTIONS", "1",
                           "validate_args: tensor or context parallelism before Blackwell"});
    }
    // torchrun's node is a host (ClusterSpec::allocation_gpus: a GB200 NVL72 compute tray of
    // 4 GPUs, not the 72-GPU NVLink domain the cost model calls a node).
    const int per_node = std::max(1, std::min(l.gpus, l.cluster.allocation_gpus()));
    cmd.nproc_per_node = per_node;
    cmd.nnodes = (l.gpus + per_node - 1) / per_node;
    if (l.gpus % per_node != 0) {
        cmd.lost.push_back(std::to_string(l.gpus) + " GPUs do not fill nodes of " +
                           std::to_string(per_node) + ": torchrun starts the same number per node");
    }
    return cmd;
}

ExportResult export_megatron(const Layout& layout) {
    const MegatronCommand cmd = megatron_command(layout);
    const auto& m = layout.parallel.mesh;
    std::string text;
    text += "# Megatron-LM arguments for the Meshwork layout '" + layout.name + "'.\n";
    text += "# " + layout.model.name + " on " + std::to_string(layout.gpus) + " GPUs (" +
            std::to_string(cmd.nnodes) + " x " + std::to_string(cmd.nproc_per_node) + "): tp " +
            std::to_string(m.tp) + ", pp " + std::to_string(m.pp) + ", dp " +
            std::to_string(m.dp) + ", cp " + std::to_string(m.cp) + ", ep " +
            std::to_string(m.ep) + "; " + std::to_string(layout.num_micro_batches()) +
            " micro-batches per step.\n";
    text += "# Add the rendezvous (--rdzv-backend c10d --rdzv-endpoint HOST:PORT), data,\n"
            "# tokenizer, optimizer and checkpoint flags, or use: meshwork-cli export --format slurm\n";
    for (const auto& [name, value, why] : cmd.env) text += "export " + name + "=" + value + "  # " + why + "\n";
    if (layout.training.zero_stage >= 2) {
        text += "unset CUDA_DEVICE_MAX_CONNECTIONS  # Megatron-FSDP: validate_args refuses 1\n";
    }
    text += "torchrun --nnodes " + std::to_string(cmd.nnodes) + " --nproc-per-node " +
            std::to_string(cmd.nproc_per_node) + " pretrain_gpt.py";
    for (const auto& [flag, value] : cmd.args) text += " \\\n    " + flag + megatron_arg_words(flag, value);
    text += "\n";
    return {text, cmd.lost};
}

}  // namespace meshwork
