#include "core/cost/fp8_cast.h"

namespace meshwork::cost {

namespace {

constexpr double kWideBytes = 2;  // the 16-bit tensor a cast reads
constexpr double kFp8Byte = 1;    // one fp8 copy written
// One NVFP4 copy written: half a byte a value and one E4M3 scale byte per 16 values.
constexpr double kNvfp4CopyBytes = 0.5 + 1.0 / 16;

// Reads of the 16-bit tensor: current scaling's amax pass and its cast (fp8_cast.h).
double reads(Fp8Recipe recipe) {
    return recipe == Fp8Recipe::Tensorwise || recipe == Fp8Recipe::Rowwise ? 2 : 1;
}

// fp8 copies written: the row-wise one, and the column-wise one where it is other bytes.
double copies(Fp8Recipe recipe, bool transposed_copy) {
    switch (recipe) {
        case Fp8Recipe::Mxfp8:
        case Fp8Recipe::Blockwise: return 2;  // 1×32 / 32×1 (1×128 / 128×1) scales differ
        case Fp8Recipe::Tensorwise:
        case Fp8Recipe::Delayed:
        case Fp8Recipe::Rowwise: return transposed_copy ? 2 : 1;
    }
    return 2;
}

// torchao's row-wise recipe: a bf16 copy transposed for the backward's column-wise scales
// (roofline_utils.py:176-211 less :146-175).
double rowwise_extra(Fp8Recipe recipe) { return recipe == Fp8Recipe::Rowwise ? 2 : 0; }

double sum_mk(const GemmShape& g) { return g.present() ? g.m * g.k * g.count : 0; }  // input
double sum_mn(const GemmShape& g) { return g.present() ? g.m * g.n * g.count : 0; }  // output gradient
double sum_kn(const GemmShape& g) { return g.present() ? g.k * g.n * g.count : 0; }  // weight

}  // namespace

double fp8_cast_bytes_per_element(Fp8Recipe recipe, bool transposed_copy, Fp8CastInput input) {
    const double written = kFp8Byte * copies(recipe, transposed_copy) + rowwise_extra(recipe);
    if (input == Fp8CastInput::NormOutput) {
        // normalization.cpp:105-119: delayed scaling writes fp8 from the norm itself (the
        // norm's own 16-bit write, priced with the norm, becomes the row-wise copy); current
        // scaling's norm computes the amax and leaves the cast to one more read.
        switch (recipe) {
            case Fp8Recipe::Delayed: return transposed_copy ? kFp8Byte + kFp8Byte : 0;  // transpose: read, write
            case Fp8Recipe::Tensorwise: return kWideBytes + written;
            default: break;
        }
    }
    return kWideBytes * reads(recipe) + written;
}

double nvfp4_cast_bytes_per_element() { return 2 * kWideBytes + 2 * kNvfp4CopyBytes; }

Fp8CastBytes fp8_cast_bytes(const BlockGemms& g, const Fp8CastContext& x) {
    const Fp8Recipe r = x.recipe;
    const bool transposed = x.transposed_copy;
    const double shards = x.sp_shards > 1 ? x.sp_shards : 1;
    // The column-wise copy is a transpose of the row-wise one (per-tensor scales on Hopper),
    // not a copy with scales of its own.
    const bool transposes = !x.nvfp4 && transposed && copies(r, true) > copies(r, false);
    auto cast = [&](double elements, Fp8CastInput input) {
        return (x.nvfp4 ? nvfp4_cast_bytes_per_element() : fp8_cast_bytes_per_element(r, transposed, input)) * elements;
    };
    // An operand sequence parallelism gathers: cast on the rank's shard; a transposed
    // column-wise copy is made after the gather, over the whole operand (read and write one
    // byte each).
    auto gathered = [&](double elements, Fp8CastInput input) {
        if (shards <= 1) return cast(elements, input);
        if (!transposes) return cast(elements, input) / shards;
        return fp8_cast_bytes_per_element(r, false, input) * elements / shards + 2 * kFp8Byte * elements;
    };
    const Fp8CastInput alone = Fp8CastInput::Standalone;
    const Fp8CastInput fc1_in = x.norm_feeds_fc1 ? Fp8CastInput::NormOutput : alone;
    const double weight_share = 1.0 / (x.micro_batches > 1 ? x.micro_batches : 1);
    Fp8CastBytes out;
    out.attention_fwd = gathered(sum_mk(g.qkv), Fp8CastInput::NormOutput) + cast(sum_mk(g.proj), alone) +
                        weight_share * cast(sum_kn(g.qkv) + sum_kn(g.proj), alone);
    out.attention_bwd = cast(sum_mn(g.qkv), alone) + gathered(sum_mn(g.proj), alone);
    out.mlp_fwd = gathered(sum_mk(g.fc1), fc1_in) + cast(sum_mk(g.fc2) + sum_mk(g.expert_fc1) + sum_mk(g.expert_fc2), alone) +
                  weight_share * cast(sum_kn(g.fc1) + sum_kn(g.fc2) + sum_kn(g.expert_fc1) + sum_kn(g.expert_fc2), alone);
    out.mlp_bwd = cast(sum_mn(g.fc1) + sum_mn(g.expert_fc1) + sum_mn(g.expert_fc2), alone) + gathered(sum_mn(g.fc2), alone);
    return out;
}

}  // namespace meshwork::cost
