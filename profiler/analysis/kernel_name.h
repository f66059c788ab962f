// Reading a kernel's name as profilers print it: demangled C++ (`void (anonymous namespace)::
// multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, …)`), plain
// (`ncclDevKernel_AllReduce_Sum_bf16_RING_LL`), with a return type, namespaces, template
// arguments, an argument list and suffixes such as ` [clone .kd]`. The classifier
// (event_classify.h) decides on the function and its scopes only, never on what a template
// argument or parameter type happens to mention; the stats table shortens the rest.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace meshwork::profiler {

struct KernelName {
    // Enclosing namespaces and classes, outermost first ("dpsk", "ep", "internode";
    // "(anonymous namespace)" as written), without their template arguments.
    std::vector<std::string_view> scopes;
    // The function itself, without template arguments: "combine", "ncclDevKernel_Generic".
    std::string_view function;

    [[nodiscard]] bool in_scope(std::string_view scope) const;
};

// Views into `name`, which must outlive the result. A name that is not C++ (a mangled
// `_Z…` symbol, a tool's label) is one function of no scope.
KernelName parse_kernel_name(std::string_view name);

// For tables: `name` itself when it has at most `max_chars` characters; else its template
// arguments and argument list collapsed to `<…>` and `(…)` (the return type, scopes and
// function kept), and cut with "..." if that is still too long. A trailing collective tag
// is kept.
std::string abbreviate_kernel_name(std::string_view name, std::size_t max_chars);

// The collective of a kernel whose name does not say it (NCCL's `ncclDevKernel_Generic`, an
// MSCCL kernel) but whose profiler args do ("Collective name": "allreduce"): the importer
// stores it in the name, `ncclDevKernel_Generic [all_reduce]`, because a trace file keeps an
// event's name and not its args (docs/trace-format.md). `collective` is Meshwork's name of it
// (core/trace/collective.h).
std::string with_collective_tag(std::string_view name, std::string_view collective);
// "all_reduce" of "ncclDevKernel_Generic [all_reduce]"; empty when the name has no tag.
std::string_view collective_tag(std::string_view name);
// The name without its tag.
std::string_view without_collective_tag(std::string_view name);

}  // namespace meshwork::profiler
