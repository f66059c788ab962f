// Reading JSON that the other side of the remote trace protocol sent: a bounded parse (so
// that no line can cost more than a fixed amount of memory or stack) and typed fields whose
// failures say, in words, which message and field were wrong and what was expected:
//   "the server's hello: field 'trace.tracks[3].rank' should be an integer in
//    0..2147483647 (it is a string)"
// and never nlohmann's "[json.exception.type_error.302] ...". Both sides use it: the client
// for the server's answers, the server for the client's requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/error.h"

namespace meshwork::profiler::remote {

// Nesting deeper than this is refused while parsing: the protocol's messages nest 4 deep,
// and nlohmann's dump() recurses (a 64 KiB line of '[' would be 65,536 frames).
inline constexpr int kMaxJsonDepth = 32;

// A malformed message from the other side; what() is the whole sentence.
class PeerError : public RuntimeError {
public:
    using RuntimeError::RuntimeError;
};

// Parses one line; throws PeerError "WHERE: not JSON (...)" or "WHERE: more than N values"
// or "WHERE: nested deeper than 32". `max_values` bounds the values (and keys) it may hold:
// a parsed value costs at most ~100 bytes, so this bounds the memory of the result.
nlohmann::json parse_peer_json(std::string_view line, const std::string& where, std::size_t max_values);

// The type of `v` in words ("a string", "null", "an array", ...).
std::string json_type_words(const nlohmann::json& v);

// A field of an object a peer sent. `where` names the message ("the server's hello"),
// `path` the object inside it ("trace.tracks[3]"; "" for the message itself).
class PeerObject {
public:
    // Throws PeerError when `j` is not an object.
    PeerObject(const nlohmann::json& j, std::string where, std::string path);

    [[nodiscard]] bool has(const char* key) const;
    [[nodiscard]] std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi) const;
    [[nodiscard]] double number(const char* key) const;
    [[nodiscard]] bool boolean(const char* key) const;
    [[nodiscard]] const std::string& text(const char* key) const;
    [[nodiscard]] const nlohmann::json& array(const char* key) const;
    [[nodiscard]] PeerObject object(const char* key) const;
    [[nodiscard]] const nlohmann::json& raw(const char* key) const;  // throws when missing
    [[nodiscard]] std::string field(const char* key) const;          // "trace.tracks[3].rank"
    [[nodiscard]] const std::string& where() const { return where_; }
    [[nodiscard]] const nlohmann::json& whole() const { return j_; }
    // Throws "WHERE: field 'F' should be WANT (it is ...)".
    [[noreturn]] void wrong(const char* key, const std::string& want) const;

private:
    const nlohmann::json& j_;
    std::string where_;
    std::string path_;
};

// Checks one array element as an integer / number in range, for arrays of plain values.
std::int64_t peer_integer(const nlohmann::json& v, const std::string& where, const std::string& field, std::int64_t lo,
                          std::int64_t hi);
double peer_number(const nlohmann::json& v, const std::string& where, const std::string& field);

}  // namespace meshwork::profiler::remote
