// Activation offload to the host (training.offload_activation_layers; Megatron-LM's
// --cpu-offloading-num-layers, which hands the layers to Transformer Engine's CPU offload,
// megatron/core/transformer/transformer_block.py:304-316 at d98e8a64): the activations a
// layer saves for its backward are copied to pinned host memory after its forward, while the
// next layer runs, and copied back before its backward, while the layer after it in the
// backward runs (docs/cost-model.md, "Activation offload to the host").
//
// Memory: the offloaded layers' activations leave HBM; one layer's stays as the copy in
// flight (the next layer's forward overlaps the offload, the previous layer's backward the
// reload: one layer of the pipeline of copies, an assumption; Transformer Engine's double
// buffering, cpu_offloading_double_buffering, would hold two and is off by default,
// model_parallel_config.py:477).
// Time: the copy crosses the cluster's host_link (PCIe or NVLink-C2C, per GPU and direction,
// the figure the cluster preset cites); what one layer's compute does not hide shows.
#pragma once

namespace meshwork::cost {

// Offloaded layers among `layers` layers starting at global layer `first`, when the first
// `offload_layers` layers of the model are offloaded.
[[nodiscard]] int offloaded_layers_in(int first, int layers, int offload_layers);

// GPU time one direction of one offloaded layer's copy adds: the copy of `layer_bytes` over
// the host link, less the `hiding_pass_s` of compute it runs beside; never negative. 0 when
// there is no link (validation refuses offload then).
[[nodiscard]] double offload_exposed_s(double layer_bytes, double hiding_pass_s, double host_bytes_per_s,
                                       double host_latency_s);

}  // namespace meshwork::cost
