#include "profiler/collect/cupti_collector.h"

#include "core/common/error.h"

namespace meshwork::profiler {

CuptiCollector::CuptiCollector(TraceSink& sink, int rank, CuptiOptions options)
    : sink_(sink), options_(std::move(options)) {
    options_.rank = rank;
}

CuptiCollector::~CuptiCollector() {
    try {
        stop();
    } catch (...) {
        // Nothing sensible to do in a destructor; stop() is where errors are reported.
    }
}

bool CuptiCollector::available(std::string* why) {
    const engine::CudaPlugin* plugin = engine::load_cuda_plugin(why);
    return plugin != nullptr && plugin->activity_available(why);
}

void CuptiCollector::start() {
    if (running_) return;
    if (!impl_) {
        std::string why;
        const engine::CudaPlugin* plugin = engine::load_cuda_plugin(&why);
        if (plugin == nullptr) throw RuntimeError("GPU profiling unavailable: " + why);
        impl_ = plugin->make_activity_collector(sink_, options_);
    }
    impl_->start();  // throws when CUPTI cannot record (no GPU, another collector running)
    running_ = true;
}

void CuptiCollector::stop() {
    if (!running_) return;
    running_ = false;
    impl_->stop();
}

std::int64_t CuptiCollector::dropped_records() const { return impl_ ? impl_->dropped_records() : 0; }

}  // namespace meshwork::profiler
