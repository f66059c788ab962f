// CuptiCollector in a build without CUDA: it exists so callers need no #ifdef, and says why
// it cannot run.
#include "collect/cupti_collector.h"

#include "common/error.h"

namespace meshwork::profiler {

struct CuptiCollector::Impl {};

CuptiCollector::CuptiCollector(TraceSink&, int, CuptiOptions) : impl_(std::make_unique<Impl>()) {}
CuptiCollector::~CuptiCollector() = default;

bool CuptiCollector::available(std::string* why) {
    if (why) *why = "this build has no CUDA support (configure with MESHWORK_CUDA=ON)";
    return false;
}

void CuptiCollector::start() {
    throw RuntimeError("GPU profiling unavailable: this build has no CUDA support (configure with MESHWORK_CUDA=ON)");
}

void CuptiCollector::stop() {}
std::int64_t CuptiCollector::dropped_records() const { return 0; }

}  // namespace meshwork::profiler
