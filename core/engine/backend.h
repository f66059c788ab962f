// Backend: one compute device of one rank (core/engine/backend.h). The sharded model
// (core/engine/model/*) is written once against this interface; the CPU backend
// (core/engine/cpu/cpu_backend.h) implements it with OpenBLAS, a CUDA backend implements it
// with cuBLAS and its own kernels.
//
// The contract is the asynchronous one of a GPU:
//   * memory lives on the device: DeviceBuffer is a handle, never dereferenced by model code;
//     host data moves only through copy_to_device / copy_to_host;
//   * every kernel is enqueued on a Stream and may run after the call returns;
//   * an Event recorded on a stream completes when the work enqueued before it is done;
//     wait_event() makes another stream wait for it (this is how communication on its own
//     stream overlaps compute), synchronize() blocks the host.
// A backend whose device is the host (CPU) may run the work at once; the model code must not
// rely on that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/engine/memory_recorder.h"
#include "core/engine/precision.h"
#include "core/trace/memory_kind.h"

namespace meshwork::engine {

// A device allocation. `ptr` is a device address (host address on the CPU backend).
struct DeviceBuffer {
    void* ptr = nullptr;
    std::size_t bytes = 0;
};

// A stream handle; 0 is the backend's default compute stream.
struct Stream {
    int id = 0;
    bool operator==(const Stream&) const = default;
};

// An event handle owned by the backend (create_event / destroy_event).
struct Event {
    int id = -1;
    [[nodiscard]] bool valid() const { return id >= 0; }
};

enum class Transpose { No, Yes };

// Arguments of the scaled causal-masked softmax used by attention. Query and key positions
// are global token positions (context parallelism holds non-contiguous pieces of a
// sequence); key j is visible to query i when k_pos[j] <= q_pos[i].
struct MaskedSoftmaxArgs {
    int rows = 0;                    // queries
    int cols = 0;                    // keys
    float scale = 1.0f;              // applied to the scores before the softmax
    const std::int32_t* q_pos = nullptr;  // device, `rows` entries
    const std::int32_t* k_pos = nullptr;  // device, `cols` entries
};

class Backend {
public:
    virtual ~Backend() = default;

    [[nodiscard]] virtual std::string name() const = 0;  // "cpu", "cuda:0", ...
    [[nodiscard]] virtual int device_index() const = 0;

    // ---- memory ---------------------------------------------------------------------------
    virtual DeviceBuffer allocate(std::size_t bytes) = 0;
    virtual void deallocate(DeviceBuffer buffer) = 0;
    [[nodiscard]] virtual std::size_t bytes_in_use() const = 0;
    [[nodiscard]] virtual std::size_t peak_bytes_in_use() const = 0;
    virtual void copy_to_device(void* dst, const void* host_src, std::size_t bytes, Stream s) = 0;
    // Completes before returning (the host reads the result).
    virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes, Stream s) = 0;
    virtual void copy(void* dst, const void* src, std::size_t bytes, Stream s) = 0;
    virtual void fill(float* dst, std::size_t count, float value, Stream s) = 0;
    // Element i of dst gets the i-th normal(0, stddev) value of the counter-based stream
    // (seed, first_index + i): the same value whatever the device or the shard, which is how
    // every layout starts from identical weights.
    virtual void fill_normal(float* dst, std::size_t count, std::uint64_t seed,
                             std::uint64_t first_index, float stddev, Stream s) = 0;

    // ---- streams and events ---------------------------------------------------------------
    [[nodiscard]] virtual Stream compute_stream() const { return Stream{0}; }
    virtual Stream create_stream(const std::string& name) = 0;
    virtual Event create_event() = 0;
    virtual void destroy_event(Event e) = 0;
    virtual void record_event(Event e, Stream s) = 0;
    virtual void wait_event(Stream waiter, Event e) = 0;  // device-side wait, host continues
    virtual void synchronize(Stream s) = 0;
    virtual void synchronize_event(Event e) = 0;
    // Nanoseconds of the event's completion on the host's steady clock, after it completed.
    // Op and collective timelines are built from event pairs.
    [[nodiscard]] virtual std::int64_t event_time_ns(Event e) = 0;

    // ---- GEMM (row-major, fp32): C = alpha·op(A)·op(B) + beta·C, op(A) is m×k, op(B) k×n.
    virtual void gemm(Transpose ta, Transpose tb, int m, int n, int k, float alpha,
                      const float* a, int lda, const float* b, int ldb, float beta, float* c,
                      int ldc, Stream s) = 0;

    // ---- elementwise and reductions -------------------------------------------------------
    virtual void axpy(float* y, const float* x, std::size_t count, float alpha, Stream s) = 0;
    virtual void scale(float* x, std::size_t count, float alpha, Stream s) = 0;
    // y = x / rms(x) · w per row; rstd (rows) is kept for the backward.
    virtual void rmsnorm_forward(const float* x, const float* w, float* y, float* rstd, int rows,
                                 int cols, float eps, Stream s) = 0;
    // dx = gradient of the input (overwritten); dw += gradient of the weight.
    virtual void rmsnorm_backward(const float* dy, const float* x, const float* w,
                                  const float* rstd, float* dx, float* dw, int rows, int cols,
                                  Stream s) = 0;
    // Rotary embedding in place on x (rows × heads × head_dim, rows are tokens at the given
    // positions); inverse = true rotates back (the backward of the forward rotation).
    virtual void rope(float* x, const std::int32_t* pos, int rows, int heads, int head_dim,
                      float theta, bool inverse, Stream s) = 0;
    // out = silu(gate) · up
    virtual void swiglu_forward(const float* gate, const float* up, float* out,
                                std::size_t count, Stream s) = 0;
    virtual void swiglu_backward(const float* dout, const float* gate, const float* up,
                                 float* dgate, float* dup, std::size_t count, Stream s) = 0;
    // In place on scores (rows × cols): probabilities of the scaled, causally masked softmax.
    virtual void masked_softmax_forward(float* scores, const MaskedSoftmaxArgs& a, Stream s) = 0;
    // dscores = scale · P ⊙ (dP − rowsum(dP ⊙ P)), in place on dp.
    virtual void softmax_backward(const float* probs, float* dp, int rows, int cols, float scale,
                                  Stream s) = 0;
    // Vocabulary-parallel embedding: rows of out get table[token − vocab_begin] for tokens
    // in [vocab_begin, vocab_begin + vocab_rows), zero otherwise.
    virtual void embedding_forward(const float* table, const std::int32_t* tokens, float* out,
                                   int count, int hidden, int vocab_begin, int vocab_rows,
                                   Stream s) = 0;
    virtual void embedding_backward(const float* dout, const std::int32_t* tokens, float* dtable,
                                    int count, int hidden, int vocab_begin, int vocab_rows,
                                    Stream s) = 0;
    // Vocabulary-parallel cross-entropy, in three passes around two all-reduces:
    //   row_max: m[r] = max_j logits[r, j]
    //   row_sum_exp_and_target: se[r] = Σ_j exp(logits[r, j] − m[r]); tl[r] = the target's
    //     logit when the target falls in this shard, else 0
    //   cross_entropy_backward: dlogits = (softmax − onehot(target)) · weight[r], in place.
    virtual void row_max(const float* x, float* out, int rows, int cols, Stream s) = 0;
    virtual void row_sum_exp_and_target(const float* logits, const float* row_max,
                                        const std::int32_t* targets, int vocab_begin,
                                        float* sum_exp, float* target_logit, int rows, int cols,
                                        Stream s) = 0;
    virtual void cross_entropy_backward(float* logits, const float* row_max,
                                        const float* sum_exp, const std::int32_t* targets,
                                        int vocab_begin, const float* row_weight, int rows,
                                        int cols, Stream s) = 0;
    // Row softmax in place (MoE router).
    virtual void softmax_rows(float* x, int rows, int cols, Stream s) = 0;
    // out[i] = src[index[i]] row by row (MoE permute).
    virtual void gather_rows(const float* src, const std::int32_t* index, float* out, int count,
                             int cols, Stream s) = 0;
    // dst[index[i]] += weight[i] · src[i] row by row; weight may be null for 1 (unpermute).
    virtual void scatter_add_rows(const float* src, const std::int32_t* index,
                                  const float* weight, float* dst, int count, int cols,
                                  Stream s) = 0;
    // out[i] = Σ_j a[i, j]·b[i, j] (MoE: gradient of the combine weights).
    virtual void row_dot(const float* a, const float* b, float* out, int rows, int cols,
                         Stream s) = 0;

    // ---- annotation (optional) -------------------------------------------------------------
    // Nested named ranges around steps, micro-batches and layers ("step 3", "mb 2",
    // "layer 5 fwd"). The CUDA backend turns them into NVTX ranges so that profilers map
    // kernels to (step, micro-batch, layer), and names the innermost one in out-of-memory
    // errors. Backends without a use for them ignore them.
    virtual void push_range(const std::string& /*name*/) {}
    virtual void pop_range() {}

    // ---- allocation recording (run --profile) ----------------------------------------------
    // The kind of what allocations from now on hold (MemoryKindScope sets it around the
    // places that allocate weights, gradients, optimizer state and activations; the rest is
    // buffers), and where they are recorded (nullptr: not recorded; the recorder outlives
    // the backend's use). Backends call record_alloc / record_free from allocate/deallocate.
    [[nodiscard]] MemoryKind memory_kind() const { return memory_kind_; }
    MemoryKind set_memory_kind(MemoryKind k) {
        const MemoryKind old = memory_kind_;
        memory_kind_ = k;
        return old;
    }
    void set_memory_recorder(MemoryRecorder* r) { memory_recorder_ = r; }

    // ---- numerics --------------------------------------------------------------------------
    // Which tensors are read as bf16 (engine/precision.h); set by the engine from the
    // layout's dtype before the first op of a run. Backends override it to change how they
    // compute and call this one to record it.
    virtual void set_precision(Precision p) { precision_ = p; }
    [[nodiscard]] Precision precision() const { return precision_; }

    // ---- optimizer -------------------------------------------------------------------------
    struct AdamW {
        float lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
        int step = 1;  // 1-based, for the bias corrections
    };
    virtual void adamw(float* param, const float* grad, float* m, float* v, std::size_t count,
                       const AdamW& hp, Stream s) = 0;

protected:
    // `allocated_after` / `reserved_after`: the backend's totals after the event.
    void record_alloc(const DeviceBuffer& b, std::size_t allocated_after, std::size_t reserved_after) {
        if (memory_recorder_) memory_recorder_->alloc(b.ptr, b.bytes, memory_kind_, allocated_after, reserved_after);
    }
    void record_free(const DeviceBuffer& b, std::size_t allocated_after, std::size_t reserved_after) {
        if (memory_recorder_) memory_recorder_->free(b.ptr, b.bytes, allocated_after, reserved_after);
    }

private:
    Precision precision_ = Precision::Fp32;
    MemoryKind memory_kind_ = MemoryKind::Buffers;
    MemoryRecorder* memory_recorder_ = nullptr;
};

// Allocations inside the scope hold `kind` (Backend::memory_kind); the previous kind after it.
class MemoryKindScope {
public:
    MemoryKindScope(Backend& be, MemoryKind kind) : be_(be), previous_(be.set_memory_kind(kind)) {}
    ~MemoryKindScope() { be_.set_memory_kind(previous_); }
    MemoryKindScope(const MemoryKindScope&) = delete;
    MemoryKindScope& operator=(const MemoryKindScope&) = delete;

private:
    Backend& be_;
    MemoryKind previous_;
};

}  // namespace meshwork::engine
