// The Kineto parser built with AVX2 (simdjson's haswell kernels); see kineto_parse.cpp.
#define MESHWORK_KINETO_PARSE_ENTRY read_kineto_file_avx2
#include "profiler/import/kineto_parse.cpp"  // NOLINT(bugprone-suspicious-include): the same code, other flags
