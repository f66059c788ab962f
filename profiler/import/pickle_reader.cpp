#include "profiler/import/pickle_reader.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "core/common/error.h"
#include "core/common/utf8.h"

namespace meshwork::profiler::pickle {

const char* kind_name(Kind kind) {
    switch (kind) {
        case Kind::None: return "None";
        case Kind::Bool: return "bool";
        case Kind::Int: return "int";
        case Kind::Float: return "float";
        case Kind::Text: return "str";
        case Kind::Bytes: return "bytes";
        case Kind::List: return "list";
        case Kind::Tuple: return "tuple";
        case Kind::Dict: return "dict";
    }
    return "?";
}

std::optional<std::int64_t> PickleDoc::as_int(NodeId id) const {
    const Node& n = nodes_[id];
    if (n.kind == Kind::Int || n.kind == Kind::Bool) return n.value;
    return std::nullopt;
}

std::optional<double> PickleDoc::as_number(NodeId id) const {
    const Node& n = nodes_[id];
    if (n.kind == Kind::Float) return std::bit_cast<double>(n.value);
    if (n.kind == Kind::Int) return static_cast<double>(n.value);
    return std::nullopt;
}

std::optional<bool> PickleDoc::as_bool(NodeId id) const {
    const Node& n = nodes_[id];
    if (n.kind == Kind::Bool) return n.value != 0;
    return std::nullopt;
}

std::optional<std::string_view> PickleDoc::as_text(NodeId id) const {
    const Node& n = nodes_[id];
    if (n.kind != Kind::Text) return std::nullopt;
    return std::string_view(text_).substr(static_cast<std::size_t>(n.value), n.size);
}

std::span<const NodeId> PickleDoc::items(NodeId id) const {
    const Node& n = nodes_[id];
    if (n.kind != Kind::List && n.kind != Kind::Tuple && n.kind != Kind::Dict) return {};
    return containers_[static_cast<std::size_t>(n.value)];
}

std::optional<NodeId> PickleDoc::get(NodeId dict, std::string_view key) const {
    if (kind(dict) != Kind::Dict) return std::nullopt;
    const auto kv = items(dict);
    std::optional<NodeId> found;
    for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
        const auto k = as_text(kv[i]);
        if (k && *k == key) found = kv[i + 1];
    }
    return found;
}

namespace {

// Opcode values from CPython's Lib/pickle.py (the protocol's one definition).
enum Op : std::uint8_t {
    MARK = '(', STOP = '.', POP = '0', POP_MARK = '1', DUP = '2', BININT = 'J', BININT1 = 'K',
    BININT2 = 'M', NONE = 'N', BINSTRING = 'T', SHORT_BINSTRING = 'U', BINUNICODE = 'X',
    APPEND = 'a', DICT = 'd', EMPTY_DICT = '}', APPENDS = 'e', BINGET = 'h', LONG_BINGET = 'j',
    LIST = 'l', EMPTY_LIST = ']', BINPUT = 'q', LONG_BINPUT = 'r', SETITEM = 's', TUPLE = 't',
    EMPTY_TUPLE = ')', SETITEMS = 'u', BINFLOAT = 'G', PROTO = 0x80, TUPLE1 = 0x85,
    TUPLE2 = 0x86, TUPLE3 = 0x87, NEWTRUE = 0x88, NEWFALSE = 0x89, LONG1 = 0x8a, LONG4 = 0x8b,
    BINBYTES = 'B', SHORT_BINBYTES = 'C', SHORT_BINUNICODE = 0x8c, BINUNICODE8 = 0x8d,
    BINBYTES8 = 0x8e, MEMOIZE = 0x94, FRAME = 0x95,
};

// The opcodes that are refused, with what each would do in Python.
const char* refused_reason(std::uint8_t op) {
    switch (op) {
        case 'c': return "GLOBAL would import a Python object";
        case 0x93: return "STACK_GLOBAL would import a Python object";
        case 'R': return "REDUCE would call a Python object";
        case 'b': return "BUILD would call __setstate__ on an object";
        case 'i': return "INST would import and call a class";
        case 'o': return "OBJ would call a class";
        case 0x81: return "NEWOBJ would call a class";
        case 0x92: return "NEWOBJ_EX would call a class";
        case 0x82: case 0x83: case 0x84: return "EXT* would import a registered Python object";
        case 'P': case 'Q': return "PERSID would ask the unpickler for an outside object";
        case 0x97: case 0x98: return "NEXT_BUFFER/READONLY_BUFFER take out-of-band buffers";
        case 0x8f: case 0x90: case 0x91: case 0x96:
            return "sets and bytearrays are not used by a memory snapshot";
        case 'I': case 'L': case 'F': case 'S': case 'V': case 'g': case 'p':
            return "protocol 0 (text) opcodes are not read; a memory snapshot is written with protocol 2 or later";
        default: return nullptr;
    }
}

}  // namespace

class Unpickler {
public:
    Unpickler(std::string_view in, const std::string& path) : in_(in), path_(path) {}

    PickleDoc run() {
        doc_.input_bytes_ = in_.size();
        if (in_.size() < 2 || static_cast<std::uint8_t>(in_[0]) != PROTO) {
            fail(0, "not a pickle of protocol 2 or later (expected the PROTO opcode 0x80 first)");
        }
        while (true) {
            if (pos_ >= in_.size()) fail(pos_, "the pickle ends without its STOP opcode (truncated file?)");
            const std::size_t at = pos_;
            const auto op = static_cast<std::uint8_t>(in_[pos_++]);
            if (op == STOP) {
                if (!marks_.empty()) fail(at, "STOP with a MARK still open");
                if (stack_.size() != 1) fail(at, "STOP with " + std::to_string(stack_.size()) + " values on the stack (expected 1)");
                if (pos_ != in_.size()) fail(pos_, std::to_string(in_.size() - pos_) + " bytes after the STOP opcode");
                doc_.root_ = stack_.back();
                return std::move(doc_);
            }
            step(at, op);
        }
    }

private:
    [[noreturn]] void fail(std::size_t at, const std::string& message) const {
        throw InputError(path_, "byte " + std::to_string(at), message);
    }

    std::string_view take(std::size_t at, std::uint64_t n, const char* what) {
        if (n > in_.size() - pos_) {
            fail(at, std::string(what) + " of " + std::to_string(n) + " bytes runs past the end of the file (" +
                         std::to_string(in_.size() - pos_) + " left)");
        }
        const auto out = in_.substr(pos_, static_cast<std::size_t>(n));
        pos_ += static_cast<std::size_t>(n);
        return out;
    }
    std::uint64_t le(std::size_t at, int n, const char* what) {
        const auto b = take(at, static_cast<std::uint64_t>(n), what);
        std::uint64_t v = 0;
        for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(b[static_cast<std::size_t>(i)]);
        return v;
    }

    NodeId add(Kind kind, std::int64_t value = 0, std::uint32_t size = 0) {
        doc_.nodes_.push_back({kind, size, value});
        return static_cast<NodeId>(doc_.nodes_.size() - 1);
    }
    NodeId add_container(Kind kind, std::vector<NodeId> items) {
        doc_.containers_.push_back(std::move(items));
        return add(kind, static_cast<std::int64_t>(doc_.containers_.size() - 1));
    }
    NodeId add_text(std::size_t at, Kind kind, std::string_view bytes) {
        if (kind == Kind::Text && !is_valid_utf8(bytes)) fail(at, "a str that is not valid UTF-8");
        const auto offset = static_cast<std::int64_t>(doc_.text_.size());
        doc_.text_.append(bytes);
        return add(kind, offset, static_cast<std::uint32_t>(bytes.size()));
    }
    void push(NodeId id) { stack_.push_back(id); }
    NodeId pop(std::size_t at, const char* op) {
        if (stack_.size() <= floor()) fail(at, std::string(op) + " on an empty stack");
        const NodeId id = stack_.back();
        stack_.pop_back();
        return id;
    }
    NodeId top(std::size_t at, const char* op) const {
        if (stack_.size() <= floor()) fail(at, std::string(op) + " on an empty stack");
        return stack_.back();
    }
    std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
    // The values above the last MARK, which is removed.
    std::vector<NodeId> pop_mark(std::size_t at, const char* op) {
        if (marks_.empty()) fail(at, std::string(op) + " without a MARK");
        const std::size_t m = marks_.back();
        marks_.pop_back();
        std::vector<NodeId> out(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
        stack_.resize(m);
        return out;
    }
    std::vector<NodeId>& container(std::size_t at, NodeId id, Kind want, const char* op) {
        const auto& n = doc_.nodes_[id];
        if (n.kind != want) {
            fail(at, std::string(op) + " into a " + kind_name(n.kind) + " (expected a " + kind_name(want) + ")");
        }
        return doc_.containers_[static_cast<std::size_t>(n.value)];
    }
    void memo_put(std::size_t at, std::uint64_t index) {
        memo_[index] = top(at, "PUT");
    }
    void memo_get(std::size_t at, std::uint64_t index) {
        const auto it = memo_.find(index);
        if (it == memo_.end()) fail(at, "GET of memo entry " + std::to_string(index) + ", which was never stored");
        push(it->second);
    }
    void set_items(std::size_t at, NodeId dict, const std::vector<NodeId>& kv, const char* op) {
        if (kv.size() % 2 != 0) fail(at, std::string(op) + " with an odd number of values (a key without its value)");
        auto& items = container(at, dict, Kind::Dict, op);
        items.insert(items.end(), kv.begin(), kv.end());
    }
    void add_long(std::size_t at, std::uint64_t n) {
        if (n > kMaxLongBytes) {
            fail(at, "an integer of " + std::to_string(n) + " bytes (at most " + std::to_string(kMaxLongBytes) +
                         ", a signed 64-bit value, is read)");
        }
        const auto b = take(at, n, "LONG");
        std::uint64_t v = 0;
        for (std::size_t i = n; i-- > 0;) v = (v << 8) | static_cast<std::uint8_t>(b[i]);
        // Two's complement of n bytes, sign-extended.
        if (n > 0 && n < 8 && (static_cast<std::uint8_t>(b[n - 1]) & 0x80) != 0) v |= ~std::uint64_t{0} << (8 * n);
        push(add(Kind::Int, static_cast<std::int64_t>(v)));
    }

    void step(std::size_t at, std::uint8_t op) {
        switch (op) {
            case PROTO: {
                const auto v = le(at, 1, "PROTO");
                if (v < 2 || v > 5) fail(at, "pickle protocol " + std::to_string(v) + " (protocols 2 to 5 are read)");
                return;
            }
            case FRAME: (void)le(at, 8, "FRAME"); return;  // framing is a read-ahead hint only
            case MARK:
                if (marks_.size() >= kMaxOpenMarks) fail(at, "more than " + std::to_string(kMaxOpenMarks) + " open MARKs");
                marks_.push_back(stack_.size());
                return;
            case POP:
                if (!marks_.empty() && marks_.back() == stack_.size()) {
                    marks_.pop_back();  // Python's POP of a bare MARK
                } else {
                    (void)pop(at, "POP");
                }
                return;
            case POP_MARK: (void)pop_mark(at, "POP_MARK"); return;
            case DUP: push(top(at, "DUP")); return;
            case NONE: push(add(Kind::None)); return;
            case NEWTRUE: push(add(Kind::Bool, 1)); return;
            case NEWFALSE: push(add(Kind::Bool, 0)); return;
            case BININT:
                push(add(Kind::Int, static_cast<std::int32_t>(static_cast<std::uint32_t>(le(at, 4, "BININT")))));
                return;
            case BININT1: push(add(Kind::Int, static_cast<std::int64_t>(le(at, 1, "BININT1")))); return;
            case BININT2: push(add(Kind::Int, static_cast<std::int64_t>(le(at, 2, "BININT2")))); return;
            case LONG1: add_long(at, le(at, 1, "LONG1")); return;
            case LONG4: add_long(at, le(at, 4, "LONG4")); return;
            case BINFLOAT: {
                const auto b = take(at, 8, "BINFLOAT");
                std::uint64_t bits = 0;
                for (std::size_t i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<std::uint8_t>(b[i]);  // big-endian
                push(add(Kind::Float, static_cast<std::int64_t>(bits)));
                return;
            }
            case SHORT_BINUNICODE: push(add_text(at, Kind::Text, take(at, le(at, 1, "SHORT_BINUNICODE"), "a str"))); return;
            case BINUNICODE: push(add_text(at, Kind::Text, take(at, le(at, 4, "BINUNICODE"), "a str"))); return;
            case BINUNICODE8: push(add_text(at, Kind::Text, take(at, le(at, 8, "BINUNICODE8"), "a str"))); return;
            // Python 2 str: the bytes as Python 3 reads them with encoding="bytes".
            case SHORT_BINSTRING: push(add_text(at, Kind::Bytes, take(at, le(at, 1, "SHORT_BINSTRING"), "a string"))); return;
            case BINSTRING: {
                const auto n = static_cast<std::int32_t>(static_cast<std::uint32_t>(le(at, 4, "BINSTRING")));
                if (n < 0) fail(at, "BINSTRING of negative length");
                push(add_text(at, Kind::Bytes, take(at, static_cast<std::uint64_t>(n), "a string")));
                return;
            }
            case SHORT_BINBYTES: push(add_text(at, Kind::Bytes, take(at, le(at, 1, "SHORT_BINBYTES"), "bytes"))); return;
            case BINBYTES: push(add_text(at, Kind::Bytes, take(at, le(at, 4, "BINBYTES"), "bytes"))); return;
            case BINBYTES8: push(add_text(at, Kind::Bytes, take(at, le(at, 8, "BINBYTES8"), "bytes"))); return;
            case EMPTY_LIST: push(add_container(Kind::List, {})); return;
            case EMPTY_DICT: push(add_container(Kind::Dict, {})); return;
            case EMPTY_TUPLE: push(add_container(Kind::Tuple, {})); return;
            case LIST: push(add_container(Kind::List, pop_mark(at, "LIST"))); return;
            case TUPLE: push(add_container(Kind::Tuple, pop_mark(at, "TUPLE"))); return;
            case DICT: {
                auto kv = pop_mark(at, "DICT");
                const NodeId d = add_container(Kind::Dict, {});
                set_items(at, d, kv, "DICT");
                push(d);
                return;
            }
            case TUPLE1: case TUPLE2: case TUPLE3: {
                const std::size_t n = static_cast<std::size_t>(op - TUPLE1 + 1);
                std::vector<NodeId> items(n);
                for (std::size_t i = n; i-- > 0;) items[i] = pop(at, "TUPLE1/2/3");
                push(add_container(Kind::Tuple, std::move(items)));
                return;
            }
            case APPEND: {
                const NodeId v = pop(at, "APPEND");
                container(at, top(at, "APPEND"), Kind::List, "APPEND").push_back(v);
                return;
            }
            case APPENDS: {
                const auto vs = pop_mark(at, "APPENDS");
                auto& items = container(at, top(at, "APPENDS"), Kind::List, "APPENDS");
                items.insert(items.end(), vs.begin(), vs.end());
                return;
            }
            case SETITEM: {
                const NodeId v = pop(at, "SETITEM");
                const NodeId k = pop(at, "SETITEM");
                set_items(at, top(at, "SETITEM"), {k, v}, "SETITEM");
                return;
            }
            case SETITEMS: {
                const auto kv = pop_mark(at, "SETITEMS");
                set_items(at, top(at, "SETITEMS"), kv, "SETITEMS");
                return;
            }
            case MEMOIZE: memo_put(at, memo_.size()); return;
            case BINPUT: memo_put(at, le(at, 1, "BINPUT")); return;
            case LONG_BINPUT: memo_put(at, le(at, 4, "LONG_BINPUT")); return;
            case BINGET: memo_get(at, le(at, 1, "BINGET")); return;
            case LONG_BINGET: memo_get(at, le(at, 4, "LONG_BINGET")); return;
            default: break;
        }
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        if (const char* why = refused_reason(op)) {
            fail(at, std::string("opcode ") + hex + ": " + why + "; refused (a memory snapshot holds plain data only)");
        }
        fail(at, std::string("unknown pickle opcode ") + hex);
    }

    std::string_view in_;
    const std::string& path_;
    std::size_t pos_ = 0;
    PickleDoc doc_;
    std::vector<NodeId> stack_;
    std::vector<std::size_t> marks_;
    std::unordered_map<std::uint64_t, NodeId> memo_;
};

PickleDoc read_pickle(std::string_view bytes, const std::string& path) {
    // Node ids and text lengths are 32-bit: every node takes at least one byte of input.
    if (bytes.size() >= std::numeric_limits<std::uint32_t>::max()) {
        throw InputError(path, "", "a pickle of " + std::to_string(bytes.size()) + " bytes (at most 4 GiB is read)");
    }
    return Unpickler(bytes, path).run();
}

}  // namespace meshwork::profiler::pickle
