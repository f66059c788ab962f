#include "core/cost/estimate_json.h"

namespace meshwork {

namespace {
nlohmann::json pass_json(const LayerPassParts& p) {
    return {{"attention_s", p.attention_s}, {"mlp_s", p.mlp_s}, {"recompute_s", p.recompute_s},
            {"tp_s", p.tp_s}, {"ep_s", p.ep_s}, {"cp_s", p.cp_s}, {"host_s", p.host_s}};
}
nlohmann::json layers_json(const Estimate& e) {
    nlohmann::json layers = nlohmann::json::object();
    if (e.dense_layer.present)
        layers["dense"] = {{"forward", pass_json(e.dense_layer.fwd)}, {"backward", pass_json(e.dense_layer.bwd)}};
    if (e.moe_layer.present)
        layers["moe"] = {{"forward", pass_json(e.moe_layer.fwd)}, {"backward", pass_json(e.moe_layer.bwd)}};
    return layers;
}
}  // namespace

nlohmann::json estimate_to_json(const Estimate& e) {
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& s : e.stages) {
        stages.push_back({{"stage", s.stage},
                          {"layers", s.layers},
                          {"in_flight", s.in_flight},
                          {"params_bytes", s.params_bytes},
                          {"grads_bytes", s.grads_bytes},
                          {"optimizer_bytes", s.optimizer_bytes},
                          {"activations_bytes", s.activations_bytes},
                          {"buffers_bytes", s.buffers_bytes},
                          {"reserved_bytes", s.reserved_bytes},
                          {"peak_bytes", s.peak_bytes},
                          {"fits", s.fits},
                          {"overflow_bytes", s.overflow_bytes},
                          {"forward_s", s.forward_s},
                          {"backward_s", s.backward_s},
                          {"dp_reduce_s", s.dp_reduce_s},
                          {"dp_gather_s", s.dp_gather_s},
                          {"optimizer_s", s.optimizer_s}});
    }
    const auto& t = e.time;
    return {{"step_time_s", e.step_time_s},
            {"tokens_per_s", e.tokens_per_s},
            {"model_tflops_per_gpu", e.model_tflops_per_gpu},
            {"hardware_tflops_per_gpu", e.hardware_tflops_per_gpu},
            {"mfu", e.mfu},
            {"bubble_fraction", e.bubble_fraction},
            {"exposed_comm_s", e.exposed_comm_s},
            {"fits", e.fits},
            {"micro_batches", e.micro_batches},
            {"worst_stage", e.worst_stage},
            {"busiest_stage", e.busiest_stage},
            {"max_overflow_bytes", e.max_overflow_bytes},
            {"stages", stages},
            {"layers", layers_json(e)},
            {"time",
             {{"pipeline_s", t.pipeline_s},
              {"compute_s", t.compute_s},
              {"recompute_s", t.recompute_s},
              {"bubble_s", t.bubble_s},
              {"tp_comm_s", t.tp_comm_s},
              {"cp_comm_s", t.cp_comm_s},
              {"ep_comm_s", t.ep_comm_s},
              {"pp_comm_s", t.pp_comm_s},
              {"dp_comm_s", t.dp_comm_s},
              {"dp_comm_total_s", t.dp_comm_total_s},
              {"host_sharing_s", t.host_sharing_s},
              {"host_launch_s", t.host_launch_s},
              {"activation_offload_s", t.activation_offload_s},
              {"optimizer_s", t.optimizer_s}}}};
}

}  // namespace meshwork
