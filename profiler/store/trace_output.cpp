#include "profiler/store/trace_output.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <filesystem>
#include <fstream>

#include "core/common/error.h"

namespace meshwork::profiler {

namespace {
std::string temp_name(const std::string& path) { return partial_name(path); }

void remove_quietly(const std::string& path) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path + suffix, ec);
}
// The PID a leftover's name ends with, or 0 when the rest is not a PID.
pid_t pid_of_partial(const std::string& name, const std::string& prefix) {
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return 0;
    std::string digits = name.substr(prefix.size());
    for (const char* s : {"-wal", "-shm", "-journal"}) {
        const std::string suffix(s);
        if (digits.size() > suffix.size() && digits.compare(digits.size() - suffix.size(), suffix.size(), suffix) == 0) {
            digits.resize(digits.size() - suffix.size());
            break;
        }
    }
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
    return static_cast<pid_t>(std::stol(digits));
}
}  // namespace

std::string partial_name(const std::string& path) { return path + ".partial." + std::to_string(::getpid()); }

void remove_dead_partials(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path target(path);
    const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
    const std::string prefix = target.filename().string() + ".partial.";
    fs::directory_iterator it(folder, ec);
    if (ec) return;
    for (const auto& entry : it) {
        const std::string name = entry.path().filename().string();
        const pid_t pid = pid_of_partial(name, prefix);
        if (pid <= 0 || pid == ::getpid()) continue;
        // ESRCH: no such process here. Alive, or not ours to signal (EPERM): keep it.
        if (::kill(pid, 0) == 0 || errno != ESRCH) continue;
        if (!entry.is_regular_file(ec) || entry.is_symlink(ec)) continue;
        fs::remove(entry.path(), ec);
    }
}

TraceOutput::TraceOutput(std::string final_path)
    : final_path_(std::move(final_path)), temp_path_(temp_name(final_path_)) {
    remove_dead_partials(final_path_);
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
    remove_dead_partials(path);
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
