// The model the arguments describe (sizes, attention, MLP, MoE, hybrid layers, rotary and the
// other details): MegatronParser, megatron_import_parser.h.
#include "core/export/megatron_import_parser.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include "core/common/error.h"
#include "core/export/canonical_layout.h"
#include "core/export/import_common.h"
#include "core/export/megatron_flags.h"
#include "core/export/megatron_hybrid.h"
#include "core/export/model_match.h"
#include "core/export/moe_layer_pattern.h"
#include "core/export/pipeline_layout.h"
#include "core/export/shell_script.h"
#include "core/layout/layout_json.h"
#include "core/layout/pipeline_split.h"
#include "core/model/hf_hybrid_config.h"
#include "core/schedule/pipeline_schedule.h"

namespace meshwork::megatron_import_detail {

bool model_architecture_flag(const std::string& flag) {
    // The arguments model() and its helpers below read for the architecture (not the
    // sequence length, the capacity factor, the tokenizer or the DeepSpeed-MoE switches,
    // which build() and the layout read too).
    static const char* const kFlags =
        "--activation-func-clamp-value --add-qkv-bias --attention-dropout --attention-head-type "
        "--disable-bias-linear --expert-interval --ffn-hidden-size --glu-linear-offset --group-query-attention "
        "--hidden-dropout --hidden-size --hybrid-attention-ratio --hybrid-layer-pattern --hybrid-mlp-ratio "
        "--hybrid-override-pattern --is-hybrid-model --kv-channels --kv-lora-rank --layernorm-epsilon "
        "--mamba-head-dim --mamba-num-groups --mamba-num-heads --mamba-state-dim --max-position-embeddings "
        "--mlp-type --moe-ffn-hidden-size --moe-layer-freq --moe-router-enable-expert-bias "
        "--moe-router-score-function --moe-router-topk --moe-shared-expert-gate "
        "--moe-shared-expert-intermediate-size --mtp-num-layers --multi-latent-attention --no-position-embedding "
        "--norm-epsilon --normalization --num-attention-heads --num-experts --num-key-value-heads --num-layers "
        "--num-query-groups --padded-vocab-size --position-embedding-type --q-lora-rank --qk-head-dim "
        "--qk-layernorm --qk-nope-head-dim --qk-pos-emb-head-dim --qk-rope-head-dim --quick-geglu "
        "--rope-scaling-factor --rope-type --rotary-base --rotary-percent --rotary-scaling-factor "
        "--rotary-seq-len-interpolation-factor --shared-moe-ffn-hidden-size --sliding-window --softmax-type "
        "--squared-relu --swiglu --topk --untie-embeddings-and-output-weights "
        "--use-llama2-rotary-position-embeddings --use-rope-scaling --use-rotary-position-embeddings "
        "--v-head-dim --vocab-size --window-attn-skip-freq --window-size";
    return list_has_word(kFlags, flag);
}

ModelSpec MegatronParser::model(bool& vocab_known) {
    ModelSpec m;
    hybrid_layers(m);
    m.hidden_size = required("--hidden-size", 1, kMaxWidth);
    m.num_heads = static_cast<int>(required("--num-attention-heads", 1, 1 << 14));
    const bool swiglu = has("--swiglu");
    // Megatron's defaults (validate_args): 4h, or 2/3 of it rounded down to 64 for SwiGLU.
    const long long ffn_default =
        swiglu ? static_cast<long long>((4 * m.hidden_size * 2 / 3) / 64 * 64) : 4 * m.hidden_size;
    m.ffn_hidden_size = integer("--ffn-hidden-size", ffn_default, 1, kMaxWidth);
    if (!has("--ffn-hidden-size")) {
        result_.notes.push_back("--ffn-hidden-size not given: Megatron-LM's default " +
                                std::to_string(ffn_default));
    }
    needs("--num-query-groups", "--group-query-attention",
          "Megatron-LM reads the groups only with grouped-query attention");
    conflict("--num-query-groups", "--num-key-value-heads", "one count of key/value heads");
    m.num_kv_heads = has("--group-query-attention")
                         ? static_cast<int>(integer("--num-query-groups", 1, 1, 1 << 14))
                         : m.num_heads;
    // Megatron-DeepSpeed: --num-key-value-heads alone turns grouped-query attention on.
    if (has("--num-key-value-heads")) {
        m.num_kv_heads = static_cast<int>(integer("--num-key-value-heads", m.num_heads, 1, 1 << 14));
    }
    if (m.num_kv_heads > m.num_heads || m.num_heads % m.num_kv_heads != 0) {
        add(field("--num-query-groups"), "the query groups must divide the attention heads");
    }
    if (has("--kv-channels")) {
        m.head_dim = integer("--kv-channels", 0, 1, kMaxWidth);
    } else if (m.hidden_size % m.num_heads != 0) {
        add(field("--hidden-size"), "not a multiple of --num-attention-heads (give --kv-channels)");
    } else {
        m.head_dim = m.hidden_size / m.num_heads;
    }
    const long long seq = integer("--seq-length", 0, 1, 1ll << 26);
    if (seq == 0 && !has("--max-position-embeddings")) {
        // Neither length is stated (a Retro or encoder script's usage line left empty):
        // say what is missing rather than build a model of no positions.
        required("--seq-length", 1, 1ll << 26);
        throw InputError(issues_);
    }
    m.max_position_embeddings = integer("--max-position-embeddings", seq, 1, 1ll << 26);
    if (!has("--max-position-embeddings") && seq > 0) {
        result_.notes.push_back("--max-position-embeddings not given: taken as --seq-length");
    }
    vocab_known = true;
    if (has("--padded-vocab-size")) {
        // The model's embedding is --padded-vocab-size when it is given, over --vocab-size
        // (training/argument_utils.py:474-478 at d98e8a64).
        m.vocab_size = integer("--padded-vocab-size", 0, 1, 1 << 24);
        if (has("--vocab-size")) {
            result_.notes.push_back("--padded-vocab-size " + text("--padded-vocab-size") + " is the embedding; " +
                                    field("--vocab-size") + " is not used for it (Megatron-LM reads the padded size first)");
        }
    } else if (has("--vocab-size")) {
        m.vocab_size = integer("--vocab-size", 0, 1, 1 << 24);
    } else if (text("--tokenizer-type") == "GPT2BPETokenizer" ||
               (!has("--tokenizer-type") && megatron_arg_given("--merge-file"))) {
        // The GPT-2 BPE vocabulary that GPT2BPETokenizer loads; it is Megatron-LM's only
        // tokenizer that reads a --merge-file.
        m.vocab_size = 50257;
        if (!has("--tokenizer-type")) {
            result_.notes.push_back("--merge-file without --tokenizer-type: the GPT-2 BPE vocabulary (50257)");
        }
    } else if (options_.vocab_size) {
        m.vocab_size = *options_.vocab_size;
        result_.notes.push_back("vocabulary size " + std::to_string(m.vocab_size) + " from --vocab-size");
    } else {
        vocab_known = false;
    }
    if (has("--tokenizer-type")) {
        result_.ignored.push_back({position("--tokenizer-type"), "--tokenizer-type " + text("--tokenizer-type"),
                                   vocab_known && !has("--vocab-size") && !has("--padded-vocab-size")
                                       ? "tokenizer: read for its vocabulary size only"
                                       : "tokenizer: not part of the layout"});
    }
    // Megatron-LM spells RMSNorm/LayerNorm, Megatron-DeepSpeed rmsnorm/layernorm.
    const std::string norm = text("--normalization", "LayerNorm");
    if (norm == "RMSNorm" || norm == "rmsnorm") m.norm = NormKind::RmsNorm;
    else if (norm == "LayerNorm" || norm == "layernorm") m.norm = NormKind::LayerNorm;
    else add(field("--normalization"), "'" + norm + "': expected LayerNorm or RMSNorm");
    // --quick-geglu: gated, x·σ(1.702x) (argument_utils.py:323-326); gpt-oss adds the
    // offset and the clamp (mlp.py:325-332).
    conflict("--swiglu", "--quick-geglu", "one MLP activation");
    // --squared-relu: relu(x)² in an ungated MLP; Megatron-LM asserts it without --swiglu
    // (argument_utils.py:320-322 at d98e8a64).
    conflict("--swiglu", "--squared-relu", "one MLP activation");
    conflict("--quick-geglu", "--squared-relu", "one MLP activation");
    m.mlp = swiglu || has("--quick-geglu") ? MlpKind::Gated : MlpKind::Dense;
    if (has("--squared-relu")) m.mlp_activation = "relu2";
    if (has("--quick-geglu")) m.glu_activation = "quick_gelu";
    if (m.mlp == MlpKind::Gated) {
        m.glu_linear_offset = real("--glu-linear-offset", 0.0, -1e6, 1e6);
        m.glu_clamp = real("--activation-func-clamp-value", 0.0, 0.0, 1e6);
    }
    std::string pos = text("--position-embedding-type", "learned_absolute");
    // mrope (multimodal RoPE, Qwen2-VL's sections of the rotary dimensions) has RoPE's
    // shapes and no parameters (Megatron-LM training/arguments.py:2397-2398, :1643-1645 at
    // d98e8a64): read as rope.
    if (pos == "mrope") {
        result_.notes.push_back(field("--position-embedding-type") +
                                " mrope: multimodal RoPE, the shapes and FLOPs of rope (read as rope)");
        pos = "rope";
    }
    if (pos != "learned_absolute" && pos != "rope" && pos != "yarn" && pos != "none") {
        add(field("--position-embedding-type"),
            "'" + pos + "': expected learned_absolute, rope, mrope, yarn or none");
    }
    // Pai-Megatron-Patch's --use-llama2-rotary-position-embeddings is its older name for
    // RoPE (megatron_patch/arguments.py:256-260 at a098ca5a).
    m.learned_position_embeddings = pos == "learned_absolute" &&
                                    !has("--use-rotary-position-embeddings") &&
                                    !has("--use-llama2-rotary-position-embeddings") &&
                                    !has("--no-position-embedding");
    if (has("--attention-head-type") && text("--attention-head-type") != "multihead") {
        // Pai's multiquery: one K/V head (megatron_patch/arguments.py:169-174).
        if (text("--attention-head-type") == "multiquery") {
            add(field("--attention-head-type"),
                "multiquery (Pai-Megatron-Patch: one K/V head) is not read: state it as "
                "--group-query-attention --num-query-groups 1");
        } else {
            add(field("--attention-head-type"), "'" + text("--attention-head-type") +
                                                     "': expected multihead or multiquery (Pai-Megatron-Patch)");
        }
    }
    if (has("--ds-sequence-parallel-size") && text("--ds-sequence-parallel-size") != "1") {
        add(field("--ds-sequence-parallel-size"),
            "changes the layout in a way import-args does not read: DeepSpeed-Ulysses sequence parallelism "
            "(Megatron-DeepSpeed; 1, its default, is read as none)");
    }
    m.tie_embeddings = !has("--untie-embeddings-and-output-weights");
    rope_and_details(m, pos);
    m.linear_bias = !has("--disable-bias-linear");
    m.qkv_bias = m.linear_bias || has("--add-qkv-bias");

    if (has("--multi-latent-attention")) {
        m.uses_mla = true;
        // Defaults of arguments.py's MLA group.
        m.mla.q_lora_rank = integer("--q-lora-rank", 0, 1, kMaxWidth);
        m.mla.kv_lora_rank = integer("--kv-lora-rank", 32, 1, kMaxWidth);
        // Pai-Megatron-Patch names the two head widths --qk-nope-head-dim and
        // --qk-rope-head-dim (megatron_patch/arguments.py:453-454 at a098ca5a).
        conflict("--qk-head-dim", "--qk-nope-head-dim", "one Q/K head width");
        conflict("--qk-pos-emb-head-dim", "--qk-rope-head-dim", "one positional head width");
        m.mla.qk_nope_head_dim =
            integer(has("--qk-nope-head-dim") ? "--qk-nope-head-dim" : "--qk-head-dim", 128, 1, kMaxWidth);
        m.mla.qk_rope_head_dim =
            integer(has("--qk-rope-head-dim") ? "--qk-rope-head-dim" : "--qk-pos-emb-head-dim", 64, 0, kMaxWidth);
        m.mla.v_head_dim = integer("--v-head-dim", 128, 1, kMaxWidth);
        m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
        m.num_kv_heads = m.num_heads;
    } else {
        for (const char* f : {"--q-lora-rank", "--kv-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim",
                              "--v-head-dim", "--qk-nope-head-dim", "--qk-rope-head-dim"}) {
            needs(f, "--multi-latent-attention", "an MLA dimension");
        }
    }
    if (megatron_deepspeed_moe()) {
        deepspeed_moe(m);
    } else if (has("--num-experts")) {
        auto& e = m.moe;
        if (text("--num-experts").find(' ') != std::string::npos) {
            add(field("--num-experts"), "'" + text("--num-experts") + "': Megatron-LM takes one expert count "
                                        "(a list of counts per layer group is Megatron-DeepSpeed's, with --deepspeed)");
        }
        e.num_experts = static_cast<int>(integer("--num-experts", 0, 1, 1 << 16));
        e.top_k = static_cast<int>(integer("--moe-router-topk", 2, 1, 1 << 16));
        e.expert_ffn_hidden = integer("--moe-ffn-hidden-size", m.ffn_hidden_size, 1, kMaxWidth);
        conflict("--moe-shared-expert-intermediate-size", "--shared-moe-ffn-hidden-size", "one shared-expert width");
        e.shared_ffn_hidden = integer("--moe-shared-expert-intermediate-size",
                                      integer("--shared-moe-ffn-hidden-size", 0, 1, kMaxWidth), 1, kMaxWidth);
        e.shared_expert_gate = has("--moe-shared-expert-gate");
        if (e.shared_ffn_hidden > 0) {
            // Megatron states the total width of the shared experts; Meshwork counts them
            // in routed-expert widths where that divides (DeepSeek), else as one.
            e.num_shared_experts =
                !e.shared_expert_gate && e.shared_ffn_hidden % e.expert_ffn_hidden == 0
                    ? static_cast<int>(e.shared_ffn_hidden / e.expert_ffn_hidden)
                    : 1;
        }
        e.router_bias = has("--moe-router-enable-expert-bias");
        e.router_score = text("--moe-router-score-function", "softmax");
        if (e.router_score != "softmax" && e.router_score != "sigmoid") {
            add(field("--moe-router-score-function"), "'" + e.router_score + "': Meshwork models softmax and sigmoid");
        }
        if (e.router_bias && e.router_score == "softmax") {
            add(field("--moe-router-enable-expert-bias"),
                "needs --moe-router-score-function sigmoid (TransformerConfig refuses expert bias with softmax)");
        }
        if (has("--moe-layer-freq")) {
            std::string error;
            if (!parse_moe_layer_freq(text("--moe-layer-freq"), m.num_layers, e.first_k_dense,
                                      e.layer_freq, error)) {
                add(field("--moe-layer-freq"), error);
            }
        }
        if (e.top_k > e.num_experts) add(field("--moe-router-topk"), "more than --num-experts");
    } else {
        for (const char* f : {"--moe-router-topk", "--moe-ffn-hidden-size",
                              "--moe-shared-expert-intermediate-size", "--moe-shared-expert-gate",
                              "--moe-router-enable-expert-bias", "--moe-layer-freq",
                              "--moe-expert-capacity-factor", "--moe-router-score-function"}) {
            needs(f, "--num-experts", "an MoE setting on a dense model");
        }
    }
    if (m.is_hybrid()) {
        mamba_and_experts(m);
    } else {
        for (const char* f : {"--mamba-state-dim", "--mamba-head-dim", "--mamba-num-groups", "--mamba-num-heads"}) {
            if (has(f)) result_.notes.push_back(field(f) + " is not used: not a hybrid model (no --hybrid-layer-pattern)");
        }
    }
    return m;
}

void MegatronParser::hybrid_layers(ModelSpec& m) {
    conflict("--hybrid-layer-pattern", "--hybrid-override-pattern", "one layer pattern (Megatron-LM asserts)");
    const std::string flag = has("--hybrid-layer-pattern") ? "--hybrid-layer-pattern" : "--hybrid-override-pattern";
    std::string pattern = text(flag);
    if (has(flag)) {
        if (const std::string problem = megatron_hybrid_pattern_problem(pattern); !problem.empty()) {
            add(field(flag), problem);
            return;
        }
        m.num_layers = static_cast<int>(pattern.size());
        const long long given = integer("--num-layers", m.num_layers, 1, 10000);
        if (given != m.num_layers) {
            result_.notes.push_back(field("--num-layers") + " " + text("--num-layers") + " is not used: " +
                                    field(flag) + " has " + std::to_string(m.num_layers) +
                                    " layers (Megatron-LM takes the pattern's count)");
        }
        for (const char* f : {"--hybrid-attention-ratio", "--hybrid-mlp-ratio"}) {
            if (has(f)) result_.notes.push_back(field(f) + " is not used: " + flag + " gives every layer");
        }
    } else {
        m.num_layers = static_cast<int>(required("--num-layers", 1, 10000));
        // pretrain_mamba.py builds a MambaModel from the ratios even when none is given
        // (pretrain_mamba.py:73-75 at core_v0.12.0).
        if (!has("--is-hybrid-model") && !has("--hybrid-attention-ratio") && !has("--hybrid-mlp-ratio") &&
            entry_script_ != "pretrain_mamba.py") {
            return;
        }
        const double attention = real("--hybrid-attention-ratio", 0.0, 0, 1);
        const double mlp = real("--hybrid-mlp-ratio", 0.0, 0, 1);
        if (attention + mlp > 1) {
            add(field("--hybrid-mlp-ratio"), "the attention and MLP ratios add up to more than 1 (Megatron-LM asserts)");
            return;
        }
        pattern = megatron_pattern_from_ratios(m.num_layers, attention, mlp);
        result_.notes.push_back("hybrid layer pattern " + pattern + " from the ratios (attention " +
                                text("--hybrid-attention-ratio", "0") + ", MLP " + text("--hybrid-mlp-ratio", "0") +
                                ") as Megatron-LM's pattern_from_ratios builds it");
    }
    try {
        m.block_kinds = block_kinds_from_pattern(pattern, file_, field(flag));
    } catch (const InputError& e) {
        add(field(flag), e.issues().front().message);
    }
}

void MegatronParser::mamba_and_experts(ModelSpec& m) {
    bool any_moe = false;
    for (const auto& k : m.block_kinds) any_moe = any_moe || k.ffn == FfnKind::Moe;
    const std::string pattern_field = field(has("--hybrid-layer-pattern") ? "--hybrid-layer-pattern" : "--hybrid-override-pattern");
    if (any_moe && !m.is_moe()) add(pattern_field, "E (MoE) layers need --num-experts");
    if (!any_moe && m.is_moe()) {
        result_.notes.push_back(field("--num-experts") + " is not used: the hybrid pattern has no E (MoE) layer");
        m.moe = MoeSpec{};
    }
    if (!m.has_mixer(MixerKind::Mamba2)) {
        for (const char* f : {"--mamba-state-dim", "--mamba-head-dim", "--mamba-num-groups", "--mamba-num-heads"}) {
            if (has(f)) result_.notes.push_back(field(f) + " is not used: the hybrid pattern has no Mamba (M) layer");
        }
        return;
    }
    auto& d = m.mamba;
    d.state_dim = integer("--mamba-state-dim", 128, 1, kMaxWidth);
    d.head_dim = integer("--mamba-head-dim", 64, 1, kMaxWidth);
    d.num_groups = static_cast<int>(integer("--mamba-num-groups", 8, 1, 1 << 14));
    if (has("--mamba-num-heads")) {
        d.num_heads = static_cast<int>(integer("--mamba-num-heads", 1, 1, 1 << 16));
    } else if ((2 * m.hidden_size) % d.head_dim != 0) {
        add(field("--mamba-head-dim"), "does not divide the Mamba inner width 2 × --hidden-size (Megatron-LM asserts)");
    } else {
        d.num_heads = static_cast<int>(2 * m.hidden_size / d.head_dim);
        result_.notes.push_back("--mamba-num-heads not given: hidden size × 2 / head dim = " +
                                std::to_string(d.num_heads) + " (Megatron-LM's default)");
    }
    if (d.num_heads > 0 && d.num_heads % d.num_groups != 0) {
        add(field("--mamba-num-groups"), std::to_string(d.num_groups) + " groups do not divide " +
                                             std::to_string(d.num_heads) + " Mamba heads (Megatron-LM asserts)");
    }
}

bool MegatronParser::megatron_deepspeed_moe() const {
    return has("--deepspeed") || has("--moe-expert-parallel-size") || has("--topk") || has("--expert-interval") ||
           has("--mlp-type") || has("--enable-expert-tensor-parallelism") ||
           has("--moe-train-capacity-factor") || has("--disable-moe-token-dropping");
}

void MegatronParser::deepspeed_moe(ModelSpec& m) {
    const std::string fork = " (Megatron-DeepSpeed 4efb479d, megatron/arguments.py)";
    std::vector<long long> counts;
    const std::string list = text("--num-experts", "1");
    for (std::size_t start = 0; start < list.size();) {
        std::size_t end = list.find(' ', start);
        if (end == std::string::npos) end = list.size();
        long long n = 0;
        if (!parse_int_text(list.substr(start, end - start), 1, 1 << 16, n)) {
            add(field("--num-experts"), "'" + list + "': expected expert counts" + fork);
            return;
        }
        counts.push_back(n);
        start = end + 1;
    }
    const int interval = static_cast<int>(integer("--expert-interval", 2, 1, 10000));
    // get_num_experts_per_layer (model/transformer.py:1650-1658): one count for every
    // expert layer, or one per layer group; layer L (1-based) has experts when L % interval == 0.
    if (counts.size() > 1) {
        if (static_cast<int>(counts.size()) != m.num_layers / interval) {
            add(field("--num-experts"), std::to_string(counts.size()) + " counts for " +
                                            std::to_string(m.num_layers / interval) +
                                            " expert layers: Megatron-DeepSpeed asserts one or one per expert layer" + fork);
            return;
        }
        for (long long c : counts) {
            if (c != counts.front()) {
                add(field("--num-experts"), "'" + list + "': different expert counts per layer (pyramid MoE); a "
                                            "ModelSpec holds one count" + fork);
                return;
            }
        }
    }
    for (const char* f : {"--moe-expert-parallel-size", "--topk", "--expert-interval", "--mlp-type",
                          "--enable-expert-tensor-parallelism", "--moe-train-capacity-factor",
                          "--disable-moe-token-dropping"}) {
        if (counts.front() == 1 && has(f)) {
            result_.ignored.push_back({position(f), std::string(f) + (text(f).empty() ? "" : " " + text(f)),
                                       "a Megatron-DeepSpeed MoE setting with one expert (--num-experts 1, a dense model)"});
        }
    }
    if (counts.front() == 1) return;
    if (text("--mlp-type", "standard") != "standard") {
        add(field("--mlp-type"), "'" + text("--mlp-type") + "': residual MoE (a dense MLP mixed with the experts by a "
                                 "learned coefficient) is not a block Meshwork models" + fork);
        return;
    }
    auto& e = m.moe;
    e.num_experts = static_cast<int>(counts.front());
    e.top_k = static_cast<int>(integer("--topk", 1, 1, 1 << 16));
    e.expert_ffn_hidden = m.ffn_hidden_size;
    e.first_k_dense = interval - 1;
    e.layer_freq = interval;
    if (e.top_k > e.num_experts) add(field("--topk"), "more than --num-experts");
    result_.notes.push_back("Megatron-DeepSpeed MoE: " + std::to_string(e.num_experts) + " experts, top-" +
                            std::to_string(e.top_k) + ", in every layer L with L % " + std::to_string(interval) +
                            " == 0 (--expert-interval" + (has("--expert-interval") ? "" : ", default 2") + ")");
}

double MegatronParser::real(const std::string& flag, double fallback, double min_value, double max_value) {
    if (!has(flag)) return fallback;
    const std::string v = text(flag);
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end != '\0' || !std::isfinite(d) || d < min_value || d > max_value) {
        add(field(flag), "'" + v + "' is not a number in [" + std::to_string(min_value) + ", " +
                             std::to_string(max_value) + "]");
        return fallback;
    }
    return d;
}

void MegatronParser::rope_and_details(ModelSpec& m, const std::string& pos) {
    conflict("--norm-epsilon", "--layernorm-epsilon", "one epsilon");
    m.norm_eps = real("--norm-epsilon", real("--layernorm-epsilon", 1e-5, 0, 1), 0, 1);
    // Megatron-LM's dropout defaults are 0.1 (transformer_config.py hidden_dropout,
    // attention_dropout); the cost model stores masks only above 0.
    m.hidden_dropout = real("--hidden-dropout", 0.1, 0, 1);
    m.attention_dropout = real("--attention-dropout", 0.1, 0, 1);
    // With MLA, --qk-layernorm is the norm of the Q and KV latents, which MLA always has
    // (counted with MLA); otherwise per-head norms of Q and K (Qwen3).
    m.qk_norm = has("--qk-layernorm") && !has("--multi-latent-attention");
    if (has("--window-size")) {
        // LEFT,RIGHT keys beside the query; a causal window of W keys is W - 1,0.
        const std::string w = text("--window-size");
        long long left = 0;
        if (!parse_int_text(w.substr(w.find_first_not_of("(["), w.find(',') - w.find_first_not_of("([")), 0,
                            1ll << 26, left)) {
            add(field("--window-size"), "'" + w + "': expected LEFT,RIGHT such as 4095,0");
        }
        m.sliding_window = left + 1;
        if (has("--window-attn-skip-freq")) {
            // An integer N: every N-th layer full. A list pattern Meshwork cannot hold.
            m.global_attention_every = static_cast<int>(integer("--window-attn-skip-freq", 0, 1, 1 << 20));
        }
    } else if (has("--window-attn-skip-freq")) {
        add(field("--window-attn-skip-freq"), "full-attention layers without --window-size: no window to skip");
    }
    if (has("--sliding-window")) {
        conflict("--window-size", "--sliding-window", "one attention window");
        if (!has("--window-size")) m.sliding_window = integer("--sliding-window", 0, 1, 1ll << 26);
    }
    if (has("--softmax-type")) {
        const std::string t = text("--softmax-type");
        if (t == "learnable") {
            m.attention_sinks = true;
        } else if (t != "vanilla") {
            add(field("--softmax-type"), "'" + t + "': Meshwork holds vanilla and learnable (attention sinks); "
                                         "off-by-one is a fixed offset it does not model");
        }
    }
    m.mtp_layers = static_cast<int>(integer("--mtp-num-layers", 0, 0, 64));
    if (m.learned_position_embeddings) {
        for (const char* f : {"--rotary-base", "--rotary-percent", "--use-rope-scaling", "--rope-type",
                              "--rotary-scaling-factor", "--rotary-seq-len-interpolation-factor"}) {
            if (has(f)) result_.ignored.push_back({position(f), f, "RoPE setting with learned positions: not used"});
        }
        return;
    }
    m.rope.theta = real("--rotary-base", 10000, 1, 1e12);
    m.rope.percent = real("--rotary-percent", 1.0, 0, 1);
    // --rope-type: MLA takes yarn by default, other attention rope (arguments.py:2906).
    const bool mla = has("--multi-latent-attention");
    const std::string rope_type = text("--rope-type", mla ? "yarn" : "rope");
    if (rope_type != "rope" && rope_type != "yarn") add(field("--rope-type"), "'" + rope_type + "': expected rope or yarn");
    // Every RoPE flag given is read or listed: none vanishes.
    const auto unused = [&](const char* f, const std::string& why) {
        if (has(f)) result_.ignored.push_back({position(f), std::string(f) + (text(f).empty() ? "" : " " + text(f)), why});
    };
    if (mla) {
        // MLA builds its own rotary embedding from --rope-type: YaRN with
        // --rotary-scaling-factor, or plain RoPE; neither reads --use-rope-scaling or the
        // interpolation factor (multi_latent_attention.py:181-199 at d98e8a64).
        const std::string mla_why = "multi-latent attention builds its rotary embedding from --rope-type "
                                    "(multi_latent_attention.py:181-199): Megatron-LM does not read it";
        unused("--use-rope-scaling", mla_why);
        unused("--rope-scaling-factor", mla_why);
        unused("--rotary-seq-len-interpolation-factor", mla_why);
        if (rope_type == "yarn") {
            m.rope.scaling = "yarn";
            m.rope.factor = real("--rotary-scaling-factor", 1.0, 0, 1e6);
        } else {
            unused("--rotary-scaling-factor", "read by YaRN only; --rope-type rope");
            if (!megatron_arg_given("--no-rope-fusion")) {
                add(field("--rope-type"), "multi-latent attention with --rope-type rope needs --no-rope-fusion: "
                                          "MLATransformerConfig raises 'apply_rope_fusion for MLA only works with "
                                          "YARN RoPE' (transformer_config.py:3345-3346)");
            }
        }
        return;
    }
    if (has("--rope-type") && rope_type != "rope") {
        // get_transformer_config asserts it (training/argument_utils.py:339-340).
        add(field("--rope-type"), "'" + rope_type + "' is for multi-latent attention: Megatron-LM asserts "
                                  "rope for other attention (training/argument_utils.py:339-340); YaRN there is "
                                  "--position-embedding-type yarn");
    }
    if (has("--use-rope-scaling")) {
        m.rope.scaling = "llama3";
        m.rope.factor = real("--rope-scaling-factor", 8.0, 0, 1e6);
        if (pos == "yarn") {
            add(field("--use-rope-scaling"), "conflicts with --position-embedding-type yarn: one RoPE scaling");
        }
        unused("--rotary-scaling-factor", "read by YaRN only (--position-embedding-type yarn)");
        unused("--rotary-seq-len-interpolation-factor", "--use-rope-scaling is the scaling read");
    } else if (pos == "yarn") {
        m.rope.scaling = "yarn";
        m.rope.factor = real("--rotary-scaling-factor", 1.0, 0, 1e6);
        unused("--rope-scaling-factor", "read with --use-rope-scaling only");
        unused("--rotary-seq-len-interpolation-factor", "YaRN is the scaling read");
    } else {
        unused("--rope-scaling-factor", "read with --use-rope-scaling only");
        unused("--rotary-scaling-factor", "read by YaRN only (--position-embedding-type yarn)");
        if (has("--rotary-seq-len-interpolation-factor")) {
            m.rope.scaling = "linear";
            m.rope.factor = static_cast<double>(integer("--rotary-seq-len-interpolation-factor", 1, 1, 1 << 20));
        }
    }
}

}  // namespace meshwork::megatron_import_detail
