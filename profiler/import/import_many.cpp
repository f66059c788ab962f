#include "profiler/import/import_many.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "core/common/error.h"
#include "profiler/import/import_trace.h"
#include "profiler/store/trace_reader.h"

namespace meshwork::profiler {

namespace fs = std::filesystem;

namespace {

bool is_trace_file_name(const fs::path& p) {
    const std::string n = p.filename().string();
    auto ends = [&](const std::string& s) {
        return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
    };
    return ends(".json") || ends(".json.gz") || ends(".sqlite");
}

// A private folder for the per-file traces, removed with everything in it.
class TempDir {
  public:
    TempDir() {
        std::random_device rd;
        for (int attempt = 0; attempt < 16; ++attempt) {
            path_ = fs::temp_directory_path() / ("meshwork-import-" + std::to_string(rd()));
            std::error_code ec;
            if (fs::create_directory(path_, ec)) return;
        }
        throw std::runtime_error("cannot create a temporary folder in " +
                                 fs::temp_directory_path().string());
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    [[nodiscard]] const fs::path& path() const { return path_; }

  private:
    fs::path path_;
};

}  // namespace

std::vector<std::string> expand_trace_inputs(const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const auto& p : paths) {
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            std::vector<std::string> found;
            for (const auto& entry : fs::directory_iterator(p, ec)) {
                if (entry.is_regular_file() && is_trace_file_name(entry.path()))
                    found.push_back(entry.path().string());
            }
            if (ec) throw InputError(p, "", "cannot list the folder: " + ec.message());
            if (found.empty())
                throw InputError(p, "",
                                 "folder holds no *.json, *.json.gz or *.sqlite trace files");
            std::sort(found.begin(), found.end());
            out.insert(out.end(), found.begin(), found.end());
        } else if (!fs::exists(p, ec)) {
            throw InputError(p, "", "file not found");
        } else {
            out.push_back(p);
        }
    }
    return out;
}

namespace {

// Each input as a Meshwork trace: a native one as it is, any other imported into `temp` (in
// parallel, `threads` at most; 0 = one per core). traces[i] is where input i's trace is;
// the first failing file, in input order, throws.
struct PerFile {
    std::vector<std::string> traces;
    std::vector<bool> native;
};

PerFile import_each(const std::vector<std::string>& inputs, const ImportManyOptions& options, const TempDir& temp,
                    ImportManyResult& result) {
    PerFile per{std::vector<std::string>(inputs.size()), std::vector<bool>(inputs.size(), false)};
    std::vector<std::exception_ptr> errors(inputs.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i = next++; i < inputs.size(); i = next++) {
            try {
                if (detect_input_format(inputs[i]) == InputFormat::MeshworkTrace) {
                    per.traces[i] = inputs[i];
                    per.native[i] = true;
                    continue;
                }
                per.traces[i] = (temp.path() / ("rank-file-" + std::to_string(i) + ".sqlite")).string();
                auto writer = TraceWriter::create(per.traces[i]);
                ImportOptions o;
                if (!options.ranks.empty()) o.rank = options.ranks[i];
                result.files[i].result = import_trace_file(inputs[i], *writer, o);
                writer->close();
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    };
    unsigned n =
        options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    n = static_cast<unsigned>(std::min<std::size_t>(n, inputs.size()));
    {
        std::vector<std::jthread> pool;
        for (unsigned t = 1; t < n; ++t) pool.emplace_back(work);
        work();
    }
    for (auto& e : errors) {
        if (e) std::rethrow_exception(e);  // the first failing file, in input order
    }
    return per;
}

// Ranks: explicit, else the files' own, else their order (when no file names one; some
// naming one and others not is refused). Returns the merge's rank overrides.
std::vector<int> assign_ranks(const std::vector<std::string>& inputs, const ImportManyOptions& options,
                              const PerFile& per, ImportManyResult& result) {
    bool all_known = true;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        auto& f = result.files[i];
        f.file = inputs[i];
        if (per.native[i]) {
            f.result.format = "meshwork";
            f.rank_source = "file";
            continue;
        }
        if (!options.ranks.empty()) {
            f.rank_source = "--rank";
        } else if (f.result.rank_known) {
            f.rank_source = "file";
        } else {
            all_known = false;
        }
    }
    std::vector<int> rank_override(inputs.size(), -1);
    if (!all_known && inputs.size() > 1) {
        bool none_known = true;
        for (const auto& f : result.files) none_known = none_known && f.rank_source.empty();
        if (!none_known) {
            for (std::size_t i = 0; i < inputs.size(); ++i) {
                if (result.files[i].rank_source.empty()) {
                    throw InputError(
                        inputs[i], "distributedInfo.rank",
                        "names no rank, while other inputs do; pass --rank once per file");
                }
            }
        }
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            result.files[i].rank_source = "order";
            result.files[i].result.rank = static_cast<int>(i);
            rank_override[i] = static_cast<int>(i);
        }
    } else {
        for (auto& f : result.files) {
            if (f.rank_source.empty()) f.rank_source = "file";
        }
    }
    return rank_override;
}

// merge_traces, with the temporary per-file traces in its errors named by the files the
// user gave.
MergeResult merge_naming_inputs(const std::vector<std::string>& inputs, const PerFile& per, TraceWriter& out,
                                const MergeOptions& merge) {
    try {
        return merge_traces(per.traces, out, merge);
    } catch (const InputError& e) {
        auto original = [&](std::string text) {
            for (std::size_t i = 0; i < per.traces.size(); ++i) {
                if (per.native[i]) continue;
                for (auto pos = text.find(per.traces[i]); pos != std::string::npos;
                     pos = text.find(per.traces[i], pos)) {
                    text.replace(pos, per.traces[i].size(), inputs[i]);
                    pos += inputs[i].size();
                }
            }
            return text;
        };
        std::vector<InputIssue> issues;
        for (const auto& issue : e.issues())
            issues.push_back({original(issue.file), issue.field, original(issue.message)});
        throw InputError(std::move(issues));
    }
}

}  // namespace

ImportManyResult import_trace_files(const std::vector<std::string>& inputs, TraceWriter& out,
                                    const ImportManyOptions& options) {
    if (inputs.empty()) throw InputError("<flags>", "INPUT", "no trace files given");
    if (!options.ranks.empty() && options.ranks.size() != inputs.size()) {
        throw InputError("<flags>", "--rank",
                         "given " + std::to_string(options.ranks.size()) + " times for " +
                             std::to_string(inputs.size()) +
                             " input files; give one per file, in order");
    }
    TempDir temp;
    ImportManyResult result;
    result.files.resize(inputs.size());
    const PerFile per = import_each(inputs, options, temp, result);
    MergeOptions merge = options.merge;
    if (merge.threads == 0) merge.threads = options.threads;
    merge.rank_override = assign_ranks(inputs, options, per, result);
    merge.allow_mixed = merge.allow_mixed || inputs.size() == 1;
    result.merge = merge_naming_inputs(inputs, per, out, merge);
    for (std::size_t i = 0; i < inputs.size(); ++i) result.merge.inputs[i].file = inputs[i];
    return result;
}

}  // namespace meshwork::profiler
