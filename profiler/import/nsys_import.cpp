#include "profiler/import/nsys_import.h"

#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "profiler/analysis/event_classify.h"
#include "profiler/analysis/range_context.h"
#include "core/common/error.h"
#include "profiler/store/sqlite_db.h"

namespace meshwork::profiler {

namespace {

constexpr const char* kKernel = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr const char* kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
constexpr const char* kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
constexpr const char* kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr const char* kNvtx = "NVTX_EVENTS";

// nsys' copyKind (CUpti_ActivityMemcpyKind) in words.
std::string memcpy_name(std::int64_t kind) {
    switch (kind) {
        case 1: return "Memcpy HtoD";
        case 2: return "Memcpy DtoH";
        case 3: return "Memcpy HtoA";
        case 4: return "Memcpy AtoH";
        case 5: return "Memcpy AtoA";
        case 6: return "Memcpy AtoD";
        case 7: return "Memcpy DtoA";
        case 8: return "Memcpy DtoD";
        case 9: return "Memcpy HtoH";
        case 10: return "Memcpy PtoP";
        default: return "Memcpy";
    }
}

struct DeviceOp {
    std::int64_t process = -1;  // pid from globalPid; -1: found through the launch
    std::int64_t device = 0, stream = 0;
    EventKind kind = EventKind::Compute;
    std::string name;
    std::int64_t start_ns = 0, end_ns = 0, bytes = 0, correlation = 0;
};

struct HostOp {
    std::int64_t thread = 0;  // globalTid
    EventKind kind = EventKind::Marker;
    std::string name;
    std::int64_t start_ns = 0, end_ns = 0, correlation = 0;
};

class NsysReader {
public:
    explicit NsysReader(const std::string& path) : db_(sql::Database::open_untrusted(path)), path_(path) {}

    void read() {
        const bool any = db_.has_table(kKernel) || db_.has_table(kMemcpy) || db_.has_table(kMemset) ||
                         db_.has_table(kRuntime) || db_.has_table(kNvtx);
        if (!any) {
            if (db_.has_table("meta") && db_.has_table("events")) {
                throw InputError(path_, "", "already a Meshwork trace; nothing to import");
            }
            const std::string tables = std::string(kKernel) + ", " + kMemcpy + ", " + kMemset + ", " + kRuntime +
                                       ", " + kNvtx;
            // nsys writes these for every session, whatever it traced: an export that has
            // them recorded nothing Meshwork reads, which is not the same as not being one.
            bool session = false;
            for (const char* t : {"PROCESSES", "TARGET_INFO_GPU", "TARGET_INFO_SESSION_START_TIME", "META_DATA",
                                  "META_DATA_CAPTURE", "META_DATA_EXPORT"}) {
                session = session || db_.has_table(t);
            }
            if (session) {
                throw InputError(path_, "",
                                 "an Nsight Systems export with no device activity: none of the tables " + tables +
                                     " (was the program profiled with nsys profile --trace=cuda,nvtx, and did it "
                                     "run any GPU work?)");
            }
            throw InputError(path_, "", "not an Nsight Systems export: none of the tables " + tables);
        }
        load_strings();
        read_kernels();
        read_copies(kMemcpy, EventKind::Memcpy);
        read_copies(kMemset, EventKind::Memset);
        read_runtime();
        read_nvtx();
        read_target_info();
    }

    ImportResult write(TraceSink& sink, const ImportOptions& options) {
        ImportResult out;
        out.format = "nsys";
        file_rank_ = options.rank >= 0 ? options.rank : rank_from_file_name(path_);
        out.rank_known = file_rank_ >= 0;
        if (file_rank_ < 0) file_rank_ = 0;
        out.rank = file_rank_;
        TraceRunInfo info = run_info();
        assign_ranks(info, out);
        sink.set_run_info(info);
        contexts_.finalize();
        const auto stream_track = add_stream_tracks(sink);
        const auto thread_track = add_thread_tracks(sink);
        write_device_events(stream_track, sink, out);
        write_host_events(thread_track, sink, out);
        return out;
    }

private:
    using StreamKey = std::tuple<int, std::int64_t, std::int64_t>;  // rank, device, stream

    [[nodiscard]] TraceRunInfo run_info() const {
        TraceRunInfo info;
        info.source = "nsys";
        info.tool_version = "meshwork " MESHWORK_VERSION;
        info.clock_domain = "nsys-session";
        info.start_time_unix_ns = session_start_ns_;
        info.extra["imported_from"] = path_;
        for (const auto& [id, name] : gpu_names_) info.extra["gpu." + std::to_string(id)] = name;
        return info;
    }

    // One rank per process that ran device work (nsys profiling an mpirun or torchrun job
    // records every process in one export): MPI ranks where the export has them, otherwise
    // the processes in pid order, starting at the file's rank. Device work whose process is
    // not recorded is given the process of its launch, else the first process.
    void assign_ranks(TraceRunInfo& info, ImportResult& out) {
        for (auto& d : device_) {
            if (d.process >= 0) continue;
            auto l = launch_by_correlation_.find(d.correlation);
            if (l != launch_by_correlation_.end()) d.process = process_of(l->second.first);
        }
        for (const auto& d : device_) {
            if (d.process >= 0) rank_of_process_.emplace(d.process, 0);
        }
        const std::int64_t first_process = rank_of_process_.empty() ? -1 : rank_of_process_.begin()->first;
        for (auto& d : device_) {
            if (d.process < 0) d.process = first_process;
        }
        if (rank_of_process_.size() > 1) {
            const auto mpi = mpi_ranks();
            int next = 0;
            for (auto& [pid, r] : rank_of_process_) {
                auto m = mpi.find(pid);
                r = m != mpi.end() ? m->second : file_rank_ + next;
                ++next;
            }
            info.world_size = static_cast<int>(rank_of_process_.size());
            out.world_size = info.world_size;
            out.rank_known = true;
        } else {
            for (auto& [pid, r] : rank_of_process_) r = file_rank_;
        }
    }

    [[nodiscard]] int rank_for(std::int64_t pid) const {
        auto it = rank_of_process_.find(pid);
        return it != rank_of_process_.end() ? it->second : file_rank_;  // host-only processes: the file's rank
    }

    // A track per (rank, device, stream); communication where an NCCL kernel ran.
    std::map<StreamKey, int> add_stream_tracks(TraceSink& sink) const {
        std::map<StreamKey, bool> streams;
        for (const auto& d : device_) {
            bool& comm = streams[{rank_for(d.process), d.device, d.stream}];
            comm = comm || d.kind == EventKind::Communication;
        }
        std::map<StreamKey, int> stream_track;
        std::map<int, std::pair<int, int>> stream_index;  // rank -> next comm, compute index
        for (const auto& [key, comm] : streams) {
            auto& [comm_index, compute_index] = stream_index[std::get<0>(key)];
            TrackInfo t{std::get<0>(key), comm ? TrackKind::CommStream : TrackKind::ComputeStream,
                        comm ? comm_index++ : compute_index++,
                        "gpu " + std::to_string(std::get<1>(key)) + " stream " + std::to_string(std::get<2>(key))};
            stream_track[key] = sink.add_track(t);
        }
        return stream_track;
    }

    // A track per host thread, in the order the threads first appear.
    std::map<std::int64_t, int> add_thread_tracks(TraceSink& sink) const {
        std::map<std::int64_t, int> thread_track;
        std::map<int, int> host_index;
        for (const auto& h : host_) {
            if (thread_track.count(h.thread)) continue;
            const std::int64_t pid = process_of(h.thread);
            const std::int64_t tid = h.thread & 0xFFFFFF;
            const int r = rank_for(pid);
            TrackInfo t{r, TrackKind::Host, host_index[r]++, "host " + std::to_string(pid) + "/" + std::to_string(tid)};
            thread_track[h.thread] = sink.add_track(t);
        }
        return thread_track;
    }

    // Each device op with the context of its launch (range_context.h device_context): found
    // by (process, correlation id), as CUPTI numbers correlations per process; an op whose
    // launch the export does not hold, though it recorded the CUDA runtime, was launched
    // before the capture started and is in no step.
    void write_device_events(const std::map<StreamKey, int>& stream_track, TraceSink& sink, ImportResult& out) const {
        const bool launches_recorded = !launch_.empty();
        for (const auto& d : device_) {
            const int r = rank_for(d.process);
            const auto l = launch_.find({d.process, d.correlation});
            sink.add_event(device_event(d, r, stream_track.at({r, d.device, d.stream}),
                                        l != launch_.end() ? &l->second : nullptr, launches_recorded, contexts_,
                                        d.process));
            ++out.events;
            ++out.device_events;
        }
    }

    void write_host_events(const std::map<std::int64_t, int>& thread_track, TraceSink& sink, ImportResult& out) const {
        for (const auto& h : host_) {
            TraceEvent e;
            e.rank = rank_for(process_of(h.thread));
            e.track = thread_track.at(h.thread);
            e.kind = h.kind;
            e.name = h.name;
            e.start_ns = h.start_ns;
            e.end_ns = h.end_ns;
            e.correlation_id = h.correlation;
            apply_context(e, contexts_.lookup(h.thread, h.start_ns));
            sink.add_event(e);
            ++out.events;
        }
    }

    [[noreturn]] void bad(const std::string& table, const std::string& msg) const {
        throw InputError(path_, table, msg);
    }

    void require_columns(const char* table, std::initializer_list<const char*> cols) const {
        for (const char* c : cols) {
            if (!db_.has_column(table, c)) bad(table, std::string("column '") + c + "' is missing");
        }
    }

    // nsys serialises process and thread ids as globalPid/globalTid: pid in bits 24..47.
    // 0 or NULL (read as 0) is "not recorded": -1.
    static std::int64_t process_of(std::int64_t global_id) {
        const std::int64_t pid = global_id <= 0 ? -1 : (global_id >> 24) & 0xFFFFFF;
        return pid == 0 ? -1 : pid;
    }

    std::string string_of(std::int64_t id) const {
        auto it = strings_.find(id);
        return it == strings_.end() ? "string#" + std::to_string(id) : it->second;
    }

    void check_times(const char* table, std::int64_t s, std::int64_t e) const {
        if (e < s) bad(table, "a row ends (" + std::to_string(e) + ") before it starts (" + std::to_string(s) + ")");
    }

    void load_strings() {
        if (!db_.has_table("StringIds")) return;
        require_columns("StringIds", {"id", "value"});
        sql::Statement st(db_, "SELECT id, value FROM StringIds");
        while (st.step()) strings_[st.int64(0)] = st.text(1);
    }

    void read_kernels() {
        if (!db_.has_table(kKernel)) return;
        require_columns(kKernel, {"start", "end", "deviceId", "streamId"});
        // Prefer the demangled name; both are ids into StringIds.
        const char* name_col = db_.has_column(kKernel, "demangledName") ? "demangledName"
                               : db_.has_column(kKernel, "shortName")   ? "shortName"
                                                                        : nullptr;
        if (!name_col) bad(kKernel, "neither column 'demangledName' nor 'shortName' is present");
        const bool has_corr = db_.has_column(kKernel, "correlationId");
        const bool has_pid = db_.has_column(kKernel, "globalPid");
        const std::string q = std::string("SELECT start, end, deviceId, streamId, ") + name_col + ", " +
                              (has_corr ? "correlationId" : "0") + ", " + (has_pid ? "globalPid" : "-1") +
                              " FROM " + kKernel;
        sql::Statement st(db_, q);
        while (st.step()) {
            DeviceOp d;
            d.start_ns = st.int64(0);
            d.end_ns = st.int64(1);
            check_times(kKernel, d.start_ns, d.end_ns);
            d.device = st.int64(2);
            d.stream = st.int64(3);
            d.name = string_of(st.int64(4));
            d.correlation = st.int64(5);
            d.process = process_of(st.int64(6));
            d.kind = event_kind_of_kernel(d.name);
            device_.push_back(std::move(d));
        }
    }

    void read_copies(const char* table, EventKind kind) {
        if (!db_.has_table(table)) return;
        require_columns(table, {"start", "end", "deviceId", "streamId", "bytes"});
        const bool has_copy_kind = kind == EventKind::Memcpy && db_.has_column(table, "copyKind");
        const bool has_corr = db_.has_column(table, "correlationId");
        const bool has_pid = db_.has_column(table, "globalPid");
        const std::string q = std::string("SELECT start, end, deviceId, streamId, bytes, ") +
                              (has_copy_kind ? "copyKind" : "0") + ", " + (has_corr ? "correlationId" : "0") + ", " +
                              (has_pid ? "globalPid" : "-1") + " FROM " + table;
        sql::Statement st(db_, q);
        while (st.step()) {
            DeviceOp d;
            d.start_ns = st.int64(0);
            d.end_ns = st.int64(1);
            check_times(table, d.start_ns, d.end_ns);
            d.device = st.int64(2);
            d.stream = st.int64(3);
            d.bytes = std::max<std::int64_t>(0, st.int64(4));
            d.kind = kind;
            d.name = kind == EventKind::Memset ? "Memset" : memcpy_name(st.int64(5));
            d.correlation = st.int64(6);
            d.process = process_of(st.int64(7));
            device_.push_back(std::move(d));
        }
    }

    void read_runtime() {
        if (!db_.has_table(kRuntime)) return;
        require_columns(kRuntime, {"start", "end", "globalTid", "correlationId", "nameId"});
        sql::Statement st(db_, std::string("SELECT start, end, globalTid, correlationId, nameId FROM ") + kRuntime);
        while (st.step()) {
            HostOp h;
            h.start_ns = st.int64(0);
            h.end_ns = st.int64(1);
            check_times(kRuntime, h.start_ns, h.end_ns);
            h.thread = st.int64(2);
            h.correlation = st.int64(3);
            h.name = string_of(st.int64(4));
            launch_[{process_of(h.thread), h.correlation}] = {h.thread, h.start_ns};
            launch_by_correlation_[h.correlation] = {h.thread, h.start_ns};
            host_.push_back(std::move(h));
        }
    }

    void read_nvtx() {
        if (!db_.has_table(kNvtx)) return;
        require_columns(kNvtx, {"start", "end", "globalTid"});
        const bool has_text = db_.has_column(kNvtx, "text");
        const bool has_text_id = db_.has_column(kNvtx, "textId");
        const std::string q = std::string("SELECT start, end, globalTid, ") + (has_text ? "text" : "NULL") + ", " +
                              (has_text_id ? "textId" : "NULL") + " FROM " + kNvtx +
                              " WHERE end IS NOT NULL AND end > start";
        sql::Statement st(db_, q);
        while (st.step()) {
            HostOp h;
            h.start_ns = st.int64(0);
            h.end_ns = st.int64(1);
            h.thread = st.int64(2);
            h.name = !st.is_null(3) ? st.text(3) : !st.is_null(4) ? string_of(st.int64(4)) : "nvtx range";
            contexts_.add_range(h.thread, h.start_ns, h.end_ns, h.name, process_of(h.thread));
            host_.push_back(std::move(h));
        }
    }

    // MPI rank of each process, when the export traced MPI (nsys --trace=mpi writes a table
    // mapping threads to ranks; probed like every other table).
    std::map<std::int64_t, int> mpi_ranks() const {
        std::map<std::int64_t, int> out;
        if (!db_.has_table("MPI_RANKS") || !db_.has_column("MPI_RANKS", "rank") ||
            !db_.has_column("MPI_RANKS", "globalTid")) {
            return out;
        }
        sql::Statement st(db_, "SELECT globalTid, rank FROM MPI_RANKS");
        while (st.step()) {
            const std::int64_t r = st.int64(1);
            if (r >= 0 && r < (1 << 24)) out.emplace(process_of(st.int64(0)), static_cast<int>(r));
        }
        return out;
    }

    void read_target_info() {
        if (db_.has_table("TARGET_INFO_SESSION_START_TIME") &&
            db_.has_column("TARGET_INFO_SESSION_START_TIME", "utcEpochNs")) {
            sql::Statement st(db_, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1");
            if (st.step()) session_start_ns_ = st.int64(0);
        }
        if (db_.has_table("TARGET_INFO_GPU") && db_.has_column("TARGET_INFO_GPU", "name") &&
            db_.has_column("TARGET_INFO_GPU", "id")) {
            sql::Statement st(db_, "SELECT id, name FROM TARGET_INFO_GPU");
            while (st.step()) gpu_names_[st.int64(0)] = st.text(1);
        }
    }

    sql::Database db_;
    std::string path_;
    std::unordered_map<std::int64_t, std::string> strings_;
    std::vector<DeviceOp> device_;
    std::vector<HostOp> host_;
    using Launch = std::pair<std::int64_t, std::int64_t>;    // launching thread (globalTid), time
    std::map<std::pair<std::int64_t, std::int64_t>, Launch> launch_;  // (process, correlation) ->
    // By correlation alone: the process of a device op that lacks globalPid (older exports).
    std::unordered_map<std::int64_t, Launch> launch_by_correlation_;
    RangeContextMap contexts_;
    std::int64_t session_start_ns_ = 0;
    std::map<std::int64_t, std::string> gpu_names_;
    int file_rank_ = 0;                          // the options' or the file name's, else 0
    std::map<std::int64_t, int> rank_of_process_;  // by assign_ranks()
};

}  // namespace

ImportResult import_nsys_sqlite(const std::string& path, TraceSink& sink, const ImportOptions& options) {
    NsysReader reader(path);
    reader.read();
    return reader.write(sink, options);
}

}  // namespace meshwork::profiler
