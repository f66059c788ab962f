// The libFuzzer entry points of one target; MESHWORK_FUZZ_ENTRY names its format's function
// in fuzz_inputs.h (set per target by CMakeLists.txt).
#include "tests/fuzz/fuzz_inputs.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
    meshwork::fuzz::use_source_resources();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    meshwork::fuzz::MESHWORK_FUZZ_ENTRY(data, size);
    return 0;
}
