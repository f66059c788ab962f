#include "tests/gui/trace_files.h"

#include "profiler/store/trace_writer.h"

namespace meshwork::gui::test {

void write_step_trace(const QString& path, const char* source, int ranks, std::int64_t clock_start_ns,
                      std::int64_t compute_ns, std::int64_t comm_ns) {
    auto writer = profiler::TraceWriter::create(path.toStdString());
    TraceRunInfo info;
    info.source = source;
    info.world_size = ranks;
    writer->set_run_info(info);
    for (int r = 0; r < ranks; ++r) {
        const int compute = writer->add_track({r, TrackKind::ComputeStream, 0, "compute"});
        const int comm = writer->add_track({r, TrackKind::CommStream, 0, "comm:tp"});
        const std::int64_t t0 = clock_start_ns + 1000 * r;
        TraceEvent e;
        e.rank = r;
        e.step = 0;
        e.track = compute;
        e.kind = EventKind::Compute;
        e.name = "block.0.mlp.fwd";
        e.start_ns = t0;
        e.end_ns = t0 + compute_ns;
        writer->add_event(e);
        e.track = comm;
        e.kind = EventKind::Communication;
        e.name = "all_reduce(tp)";
        e.start_ns = t0 + compute_ns;
        e.end_ns = t0 + compute_ns + comm_ns;
        e.bytes = 1 << 20;
        writer->add_event(e);
    }
    writer->close();
}

}  // namespace meshwork::gui::test
