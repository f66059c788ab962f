// Writes the seed Meshwork traces for fuzz_meshwork_trace: one closed (indexes, summaries,
// marked complete) and one left open, as a killed run leaves it. Usage: make_trace_seeds DIR
#include <cstdio>
#include <string>

#include "profiler/store/trace_writer.h"

namespace {

void write_trace(const std::string& path, bool close) {
    auto writer = meshwork::profiler::TraceWriter::create(path);
    meshwork::TraceRunInfo info;
    info.source = "meshwork-cpu";
    info.clock_domain = "steady";
    info.world_size = 2;
    writer->set_run_info(info);
    for (int rank = 0; rank < 2; ++rank) {
        const int compute = writer->add_track({rank, meshwork::TrackKind::ComputeStream, 0, "compute"});
        const int comm = writer->add_track({rank, meshwork::TrackKind::CommStream, 0, "comm:tp"});
        writer->set_rank_info(rank, "cpu", rank * 100);
        for (int i = 0; i < 40; ++i) {
            meshwork::TraceEvent e;
            e.rank = rank;
            e.track = i % 3 == 0 ? comm : compute;
            e.kind = i % 3 == 0 ? meshwork::EventKind::Communication : meshwork::EventKind::Compute;
            e.name = i % 3 == 0 ? "all_reduce(tp)" : "block." + std::to_string(i % 4) + ".mlp.fwd";
            e.start_ns = i * 1000;
            e.end_ns = i * 1000 + 700;
            e.bytes = i % 3 == 0 ? 4096 : 0;
            e.flops = 1e6;
            e.step = i / 20;
            e.layer = i % 4;
            writer->add_event(e);
        }
        writer->add_counter(rank, compute, "memory", 500, 1024.0);
    }
    if (close) writer->close();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_trace_seeds DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    write_trace(dir + "/complete.mwtrace", true);
    write_trace(dir + "/incomplete.mwtrace", false);
    return 0;
}
