// Chooses the Kineto parser built for this CPU (kineto_parse.cpp).
#include "profiler/import/kineto_file.h"

namespace meshwork::profiler {

#if MESHWORK_KINETO_AVX2
KinetoFile read_kineto_file_avx2(const std::string& path);
#endif

KinetoFile read_kineto_file(const std::string& path) {
#if MESHWORK_KINETO_AVX2
    static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                             __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("pclmul");
    if (avx2) return read_kineto_file_avx2(path);
#endif
    return read_kineto_file_portable(path);
}

}  // namespace meshwork::profiler
