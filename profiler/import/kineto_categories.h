// Kineto event categories across PyTorch versions and devices, matched in any case:
//   1.8/1.9: Kernel, Memcpy, Memset, Runtime, Operator
//   1.10+:   kernel, gpu_memcpy, gpu_memset, cuda_runtime, cuda_driver, cpu_op,
//            user_annotation, gpu_user_annotation, python_function, cuda_sync
//   ROCm:    the same names (HIP calls under cuda_runtime), or hip_runtime
//   MTIA:    mtia_runtime (launches), mtia_ccp_events (device work)
//   other accelerators through PrivateUse1: privateuse1_runtime / privateuse1_driver
// Anything else is host activity.
#pragma once

#include <string_view>

#include "profiler/import/kineto_file.h"

namespace meshwork::profiler {

KinetoRole kineto_role_of(std::string_view category);

}  // namespace meshwork::profiler
