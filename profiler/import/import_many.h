// Several per-rank profiles of one job (Kineto JSON, nsys SQLite, or folders of them) into one
// trace: each file is imported on its own thread into a temporary trace, then the traces are
// merged with their clocks aligned (merge/trace_merge.h: absolute timestamps when every file
// has them, else the first common collective).
#pragma once

#include <string>
#include <vector>

#include "profiler/import/import_options.h"
#include "profiler/merge/trace_merge.h"
#include "profiler/store/trace_writer.h"

namespace meshwork::profiler {

struct ImportManyOptions {
    std::vector<int>
        ranks;             // one per input file (after folders are expanded); empty: from the files
    unsigned threads = 0;  // 0: hardware concurrency
    MergeOptions merge;
};

struct ImportedFile {
    std::string file;
    ImportResult result;
    std::string rank_source;  // "--rank", "file", "order"
};

struct ImportManyResult {
    std::vector<ImportedFile> files;
    MergeResult merge;
};

// Files in the order given; a folder contributes its *.json, *.json.gz and *.sqlite files in
// name order. InputError for a path that is missing or a folder with no trace files.
std::vector<std::string> expand_trace_inputs(const std::vector<std::string>& paths);

// Imports `inputs` (already expanded) into `out`. A Meshwork trace among them is merged as it
// is. Ranks: --rank values, else each file's own (distributedInfo, "rankN" in its name), else
// the file's position when no file names its rank; two files with one rank are refused.
ImportManyResult import_trace_files(const std::vector<std::string>& inputs, TraceWriter& out,
                                    const ImportManyOptions& options);

}  // namespace meshwork::profiler
