#include "profiler/store/trace_output.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/common/error.h"

namespace meshwork::profiler {

namespace {
std::string temp_name(const std::string& path) { return path + ".partial." + std::to_string(::getpid()); }

void remove_quietly(const std::string& path) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path + suffix, ec);
}
}  // namespace

TraceOutput::TraceOutput(std::string final_path)
    : final_path_(std::move(final_path)), temp_path_(temp_name(final_path_)) {
    TraceWriterOptions options;
    options.crash_readable = false;  // never the destination until complete: no need for a journal
    writer_ = TraceWriter::create(temp_path_, options);
}

TraceOutput::~TraceOutput() {
    if (committed_) return;
    writer_.reset();  // stops the writer thread
    remove_quietly(temp_path_);
}

void TraceOutput::commit() {
    writer_->close();
    writer_.reset();
    std::error_code ec;
    std::filesystem::rename(temp_path_, final_path_, ec);
    if (ec) {
        remove_quietly(temp_path_);
        throw RuntimeError("cannot rename " + temp_path_ + " to " + final_path_ + ": " + ec.message());
    }
    committed_ = true;
}

void write_stream_atomically(const std::string& path, const std::function<void(std::ostream&)>& produce) {
    const std::string tmp = temp_name(path);
    try {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw RuntimeError("cannot write " + tmp);
        produce(out);
        out.flush();
        if (!out) throw RuntimeError("cannot write " + tmp + " (disk full?)");
    } catch (...) {
        remove_quietly(tmp);
        throw;
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        remove_quietly(tmp);
        throw RuntimeError("cannot rename " + tmp + " to " + path + ": " + ec.message());
    }
}

void write_file_atomically(const std::string& path, const std::string& text) {
    write_stream_atomically(path, [&](std::ostream& out) { out << text; });
}

}  // namespace meshwork::profiler
