// Strict reading of JSON inputs: every value is checked for type and range, unknown keys
// are refused, and each error names the file and the dotted field path.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace meshwork {

using Json = nlohmann::json;

// Nesting deeper than this is refused before it can exhaust the stack.
inline constexpr int kMaxJsonDepth = 128;
// Input files larger than this are refused (layouts and configs are kilobytes).
inline constexpr std::uintmax_t kMaxJsonFileBytes = 64ull << 20;

// Parses text; errors name `file` and the line and column.
Json parse_json_text(const std::string& text, const std::string& file);
// Reads and parses a file; a missing, unreadable, oversized or malformed file is an InputError.
Json load_json_file(const std::string& path);
// Writes `value` atomically (temporary file + rename) so that no half-written file is left.
void save_json_file(const Json& value, const std::string& path, int indent = 2);

// A view of one JSON object that checks what it reads and remembers which keys were used.
class JsonObjectReader {
public:
    JsonObjectReader(const Json& value, std::string file, std::string path);

    [[nodiscard]] bool has(const std::string& key) const;
    [[nodiscard]] const Json& raw(const std::string& key);  // required, any type
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] const std::string& file() const { return file_; }
    [[nodiscard]] std::string field(const std::string& key) const;

    std::int64_t get_int(const std::string& key, std::int64_t min_value, std::int64_t max_value);
    std::int64_t get_int_or(const std::string& key, std::int64_t fallback, std::int64_t min_value,
                            std::int64_t max_value);
    double get_number(const std::string& key, double min_value, double max_value);
    double get_number_or(const std::string& key, double fallback, double min_value,
                         double max_value);
    std::string get_string(const std::string& key);
    std::string get_string_or(const std::string& key, const std::string& fallback);
    bool get_bool(const std::string& key);
    bool get_bool_or(const std::string& key, bool fallback);
    JsonObjectReader get_object(const std::string& key);

    // Marks a key as known without reading it (documentation keys such as "source").
    void ignore(const std::string& key);
    // Refuses every key that was not read: names the first unknown key.
    void reject_unknown_keys() const;

    // Checks one value found elsewhere (array elements) against a type and range.
    static std::int64_t as_int(const Json& v, const std::string& file, const std::string& field,
                               std::int64_t min_value, std::int64_t max_value);
    static double as_number(const Json& v, const std::string& file, const std::string& field,
                            double min_value, double max_value);

private:
    const Json& value_;
    std::string file_;
    std::string path_;
    std::set<std::string> used_;
};

// The JSON type of a value in words ("a string", "an array", ...), for messages.
std::string json_type_name(const Json& v);

}  // namespace meshwork
