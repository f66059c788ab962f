// A reader for the plain-data subset of Python's pickle format (protocols 2 to 5), as
// PyTorch writes a CUDA memory snapshot (torch.cuda.memory._snapshot() / _dump_snapshot():
// dicts, lists, tuples, text, integers, floats, booleans and None). No Python is involved and
// nothing in the input can run code: the opcodes that name a Python callable or class
// (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, EXT*, PERSID, ...) are refused with
// an InputError naming the byte offset. docs/profiler.md "Memory snapshots".
//
// The result is a graph of nodes in one arena: the memo (MEMOIZE/BINPUT then BINGET) can make
// one container a child of several, or of itself, exactly as Python's unpickler would. A
// consumer must therefore walk it by a fixed schema, never recursively by content, and bound
// its work by the input size (PickleDoc::input_bytes()).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace meshwork::profiler::pickle {

enum class Kind : std::uint8_t { None, Bool, Int, Float, Text, Bytes, List, Tuple, Dict };

const char* kind_name(Kind kind);

using NodeId = std::uint32_t;

// Limits, each far above what a real snapshot needs and each reached as an InputError.
inline constexpr std::size_t kMaxOpenMarks = 4096;     // MARK nesting (a snapshot uses about 6)
inline constexpr std::size_t kMaxLongBytes = 8;         // LONG1/LONG4 payloads: int64 only

class PickleDoc {
public:
    [[nodiscard]] NodeId root() const { return root_; }
    [[nodiscard]] Kind kind(NodeId id) const { return nodes_[id].kind; }
    [[nodiscard]] std::size_t node_count() const { return nodes_.size(); }
    [[nodiscard]] std::size_t input_bytes() const { return input_bytes_; }

    // Value accessors: nullopt when the node is of another kind. An Int is also a Bool's 0/1
    // (Python's bool is an int).
    [[nodiscard]] std::optional<std::int64_t> as_int(NodeId id) const;
    [[nodiscard]] std::optional<double> as_number(NodeId id) const;  // Int or Float
    [[nodiscard]] std::optional<bool> as_bool(NodeId id) const;
    [[nodiscard]] std::optional<std::string_view> as_text(NodeId id) const;  // valid UTF-8

    // The items of a List or Tuple; a Dict's keys and values interleaved (key0, value0, ...),
    // in insertion order; empty for other kinds.
    [[nodiscard]] std::span<const NodeId> items(NodeId id) const;
    // The value under a text key of a Dict (the last one set, as in Python); nullopt when the
    // node is not a dict or has no such key. Cost: the dict's size.
    [[nodiscard]] std::optional<NodeId> get(NodeId dict, std::string_view key) const;

private:
    friend class Unpickler;
    struct Node {
        Kind kind = Kind::None;
        std::uint32_t size = 0;  // Text/Bytes: length
        std::int64_t value = 0;  // Bool/Int: the value; Float: the bits; Text/Bytes: offset
                                 // into text_; containers: index into containers_
    };
    std::vector<Node> nodes_;
    std::vector<std::vector<NodeId>> containers_;
    std::string text_;
    NodeId root_ = 0;
    std::size_t input_bytes_ = 0;
};

// Unpickles `bytes` (the whole file). `path` names the file in errors, which give the byte
// offset and the opcode: "snapshot.pickle: byte 812: opcode GLOBAL (0x63) would import a
// Python object; a memory snapshot holds plain data only".
PickleDoc read_pickle(std::string_view bytes, const std::string& path);

}  // namespace meshwork::profiler::pickle
