// One entry point per input format: what a fuzz target runs for each input, and what the
// regression test (tests/reliability/tst_fuzz_regressions.cpp) replays for each saved finding.
// The contract every parser must keep is "a value or an InputError": an InputError is
// swallowed, any other exception escapes on purpose (libFuzzer reports the abort from
// std::terminate with the input), and a broken round trip aborts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace meshwork::fuzz {

using EntryPoint = void (*)(const std::uint8_t* data, std::size_t size);

void layout_json(const std::uint8_t* data, std::size_t size);
void cluster_json(const std::uint8_t* data, std::size_t size);
void hf_config(const std::uint8_t* data, std::size_t size);
void megatron_args(const std::uint8_t* data, std::size_t size);
void shell_script(const std::uint8_t* data, std::size_t size);
void bridge_recipe(const std::uint8_t* data, std::size_t size);
void kineto_json(const std::uint8_t* data, std::size_t size);
void nsys_sqlite(const std::uint8_t* data, std::size_t size);
void meshwork_trace(const std::uint8_t* data, std::size_t size);
// A PyTorch memory snapshot's pickle (profiler/import/pickle_reader.h).
void pickle(const std::uint8_t* data, std::size_t size);
// The remote trace protocol (fuzz_remote.cpp): a server's replies, a client's requests.
void remote_client(const std::uint8_t* data, std::size_t size);
void remote_server(const std::uint8_t* data, std::size_t size);

// By fuzz target name ("fuzz_layout_json" -> layout_json).
const std::map<std::string, EntryPoint>& entry_points();

// Resource presets (models, clusters, GPUs) are looked up by name: point at the source tree
// unless MESHWORK_RESOURCES is set already.
void use_source_resources();

}  // namespace meshwork::fuzz
