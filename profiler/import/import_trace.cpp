#include "profiler/import/import_trace.h"

#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "core/common/error.h"
#include "profiler/import/kineto_import.h"
#include "profiler/import/memory_snapshot.h"
#include "profiler/import/nsys_import.h"
#include "profiler/import/text_input.h"
#include "profiler/store/sqlite_db.h"

namespace meshwork::profiler {

InputFormat detect_input_format(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw InputError(path, "", "file not found");
    if (std::filesystem::is_directory(path, ec)) throw InputError(path, "", "is a directory");
    std::ifstream in(path, std::ios::binary);
    std::array<char, 64> head{};
    in.read(head.data(), head.size());
    const auto n = static_cast<std::size_t>(in.gcount());
    if (n == 0) throw InputError(path, "", "file is empty");
    if (n >= 16 && std::string(head.data(), 15) == "SQLite format 3") {
        auto db = sql::Database::open_untrusted(path);
        return db.has_table("meta") && db.has_table("events") ? InputFormat::MeshworkTrace
                                                              : InputFormat::NsysSqlite;
    }
    // Python pickles (protocol 2+: 0x80 then the protocol number), plain or gzip: a
    // torch.cuda.memory._snapshot() dump (memory_snapshot.h refuses any other pickle).
    if (n >= 2 && static_cast<unsigned char>(head[0]) == 0x80 && head[1] >= 2 && head[1] <= 5) {
        return InputFormat::MemorySnapshot;
    }
    if (is_gzip_file(path)) return looks_like_pickle(path) ? InputFormat::MemorySnapshot : InputFormat::KinetoJson;
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(head[i]);
        if (std::isspace(c)) continue;
        // '{' (an object with traceEvents), '[' (the Trace Event Format's array form), or a BOM.
        if (c == '{' || c == '[' || (c == 0xEF && i == 0)) return InputFormat::KinetoJson;
        break;
    }
    throw InputError(path, "",
                     "not a trace this build imports (expected an Nsight Systems SQLite export or a "
                     "PyTorch/Kineto JSON trace, plain or gzip)");
}

ImportResult import_trace_file(const std::string& path, TraceSink& sink, const ImportOptions& options) {
    switch (detect_input_format(path)) {
        case InputFormat::MeshworkTrace:
            throw InputError(path, "", "already a Meshwork trace; nothing to import");
        case InputFormat::NsysSqlite: return import_nsys_sqlite(path, sink, options);
        case InputFormat::KinetoJson: return import_kineto_json(path, sink, options);
        case InputFormat::MemorySnapshot: return import_memory_snapshot(path, sink, options);
    }
    throw InputError(path, "", "unknown format");
}

}  // namespace meshwork::profiler
