#include "core/common/json_reader.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <unistd.h>
#include <vector>

#include "core/common/error.h"

namespace meshwork {

namespace {

// Line and column (1-based) of a byte offset, for parse errors.
std::string line_col(const std::string& text, std::size_t byte) {
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

std::string describe_number(const Json& v) {
    std::ostringstream os;
    os << v.dump();
    return os.str();
}

}  // namespace

std::string json_type_name(const Json& v) {
    switch (v.type()) {
        case Json::value_t::null: return "null";
        case Json::value_t::object: return "an object";
        case Json::value_t::array: return "an array";
        case Json::value_t::string: return "a string";
        case Json::value_t::boolean: return "a boolean";
        case Json::value_t::number_integer:
        case Json::value_t::number_unsigned: return "an integer";
        case Json::value_t::number_float: return "a number";
        default: return "an unsupported value";
    }
}

namespace {

// Follows the parser's callbacks to name the first key that appears twice in one object.
// nlohmann keeps the last value of a duplicated key silently; for hand-edited layouts and
// configs that hides a mistake (two "tp" entries, only one of which counts), so it is refused.
class DuplicateKeyFinder {
public:
    void on_event(Json::parse_event_t event, const Json& parsed) {
        using E = Json::parse_event_t;
        switch (event) {
            case E::object_start: enter(true); break;
            case E::array_start: enter(false); break;
            case E::object_end:
            case E::array_end:
                if (!frames_.empty()) frames_.pop_back();
                break;
            case E::key: on_key(parsed.get<std::string>()); break;
            case E::value: count_array_element(); break;
        }
    }
    // The dotted path of the first duplicated key ("parallel.tp"), empty when none.
    [[nodiscard]] const std::string& duplicate() const { return duplicate_; }

private:
    struct Frame {
        bool object = true;
        std::set<std::string> keys;
        std::string key;       // the key being read (objects)
        std::size_t count = 0;  // elements seen (arrays)
    };

    void count_array_element() {
        if (!frames_.empty() && !frames_.back().object) ++frames_.back().count;
    }
    void enter(bool object) {
        count_array_element();
        frames_.push_back(Frame{object, {}, {}, 0});
    }
    void on_key(const std::string& key) {
        if (frames_.empty()) return;
        Frame& top = frames_.back();
        if (!top.keys.insert(key).second && duplicate_.empty()) duplicate_ = path_to(key);
        top.key = key;
    }
    [[nodiscard]] std::string path_to(const std::string& key) const {
        std::string path;
        for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
            const Frame& f = frames_[i];
            if (f.object) {
                path += (path.empty() ? "" : ".") + f.key;
            } else {
                path += "[" + std::to_string(f.count == 0 ? 0 : f.count - 1) + "]";
            }
        }
        return path + (path.empty() ? "" : ".") + key;
    }

    std::vector<Frame> frames_;
    std::string duplicate_;
};

}  // namespace

Json parse_json_text(const std::string& text, const std::string& file) {
    // The callback sees the depth of every value; refusing deep nesting here keeps the
    // recursive parser from exhausting the stack on hostile input.
    bool too_deep = false;
    DuplicateKeyFinder duplicates;
    auto guard = [&too_deep, &duplicates](int depth, Json::parse_event_t event, Json& parsed) {
        if (depth > kMaxJsonDepth) too_deep = true;
        if (!too_deep) duplicates.on_event(event, parsed);
        return !too_deep;
    };
    try {
        Json out = Json::parse(text, guard, /*allow_exceptions=*/true,
                               /*ignore_comments=*/false);
        if (too_deep) {
            throw InputError(file, "",
                             "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                 " levels");
        }
        if (!duplicates.duplicate().empty()) {
            throw InputError(file, duplicates.duplicate(),
                             "duplicated key (a JSON object may name a key once)");
        }
        return out;
    } catch (const Json::parse_error& e) {
        if (too_deep) {
            throw InputError(file, "",
                             "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                 " levels");
        }
        std::string what = e.what();
        // nlohmann's message starts with "[json.exception.parse_error.101] parse error at ...".
        auto pos = what.find("] ");
        if (pos != std::string::npos) what = what.substr(pos + 2);
        throw InputError(file, "",
                         "malformed JSON at " + line_col(text, e.byte == 0 ? 0 : e.byte - 1) +
                             ": " + what);
    } catch (const Json::out_of_range& e) {
        // A number beyond double's range ("1e400") is out_of_range.406, not a parse_error.
        std::string what = e.what();
        auto pos = what.find("] ");
        if (pos != std::string::npos) what = what.substr(pos + 2);
        throw InputError(file, "", "malformed JSON: " + what);
    }
}

Json load_json_file(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw InputError(path, "", "file not found");
    if (std::filesystem::is_directory(path, ec)) throw InputError(path, "", "is a directory");
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw InputError(path, "", "cannot read file size: " + ec.message());
    if (size > kMaxJsonFileBytes) {
        throw InputError(path, "",
                         "file is " + std::to_string(size) + " bytes, more than the " +
                             std::to_string(kMaxJsonFileBytes) + " bytes a JSON input may have");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "", "cannot open file for reading");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    if (text.empty()) throw InputError(path, "", "file is empty");
    return parse_json_text(text, path);
}

void save_json_file(const Json& value, const std::string& path, int indent) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw RuntimeError("cannot write " + tmp);
        out << value.dump(indent) << "\n";
        out.flush();
        if (!out) {
            std::filesystem::remove(tmp);
            throw RuntimeError("cannot write " + tmp + " (disk full?)");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp);
        throw RuntimeError("cannot rename " + tmp + " to " + path + ": " + ec.message());
    }
}

JsonObjectReader::JsonObjectReader(const Json& value, std::string file, std::string path)
    : value_(value), file_(std::move(file)), path_(std::move(path)) {
    if (!value_.is_object()) {
        throw InputError(file_, path_.empty() ? "(top level)" : path_,
                         "expected an object, found " + json_type_name(value_));
    }
}

std::string JsonObjectReader::field(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
}

bool JsonObjectReader::has(const std::string& key) const { return value_.contains(key); }

const Json& JsonObjectReader::raw(const std::string& key) {
    auto it = value_.find(key);
    if (it == value_.end()) throw InputError(file_, field(key), "required field is missing");
    used_.insert(key);
    return *it;
}

void JsonObjectReader::ignore(const std::string& key) { used_.insert(key); }

std::int64_t JsonObjectReader::as_int(const Json& v, const std::string& file,
                                      const std::string& field, std::int64_t min_value,
                                      std::int64_t max_value) {
    std::int64_t out = 0;
    if (v.is_number_integer()) {
        if (v.is_number_unsigned() &&
            v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
            throw InputError(file, field, describe_number(v) + " is out of range");
        }
        out = v.get<std::int64_t>();
    } else if (v.is_number_float()) {
        const double d = v.get<double>();
        if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e15) {
            throw InputError(file, field,
                             "expected an integer, found " + describe_number(v) +
                                 (std::fabs(d) > 9.0e15 ? " (absurdly large)" : ""));
        }
        out = static_cast<std::int64_t>(d);
    } else {
        throw InputError(file, field, "expected an integer, found " + json_type_name(v));
    }
    if (out < min_value || out > max_value) {
        throw InputError(file, field,
                         std::to_string(out) + " is outside the allowed range [" +
                             std::to_string(min_value) + ", " + std::to_string(max_value) + "]");
    }
    return out;
}

double JsonObjectReader::as_number(const Json& v, const std::string& file,
                                   const std::string& field, double min_value, double max_value) {
    if (!v.is_number()) {
        throw InputError(file, field, "expected a number, found " + json_type_name(v));
    }
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < min_value || d > max_value) {
        std::ostringstream os;
        os << describe_number(v) << " is outside the allowed range [" << min_value << ", "
           << max_value << "]";
        throw InputError(file, field, os.str());
    }
    return d;
}

std::int64_t JsonObjectReader::get_int(const std::string& key, std::int64_t min_value,
                                       std::int64_t max_value) {
    return as_int(raw(key), file_, field(key), min_value, max_value);
}

std::int64_t JsonObjectReader::get_int_or(const std::string& key, std::int64_t fallback,
                                          std::int64_t min_value, std::int64_t max_value) {
    if (!has(key) || value_.at(key).is_null()) {
        used_.insert(key);
        return fallback;
    }
    return get_int(key, min_value, max_value);
}

double JsonObjectReader::get_number(const std::string& key, double min_value, double max_value) {
    return as_number(raw(key), file_, field(key), min_value, max_value);
}

double JsonObjectReader::get_number_or(const std::string& key, double fallback, double min_value,
                                       double max_value) {
    if (!has(key) || value_.at(key).is_null()) {
        used_.insert(key);
        return fallback;
    }
    return get_number(key, min_value, max_value);
}

std::string JsonObjectReader::get_string(const std::string& key) {
    const Json& v = raw(key);
    if (!v.is_string()) {
        throw InputError(file_, field(key), "expected a string, found " + json_type_name(v));
    }
    return v.get<std::string>();
}

std::string JsonObjectReader::get_string_or(const std::string& key, const std::string& fallback) {
    if (!has(key) || value_.at(key).is_null()) {
        used_.insert(key);
        return fallback;
    }
    return get_string(key);
}

bool JsonObjectReader::get_bool(const std::string& key) {
    const Json& v = raw(key);
    if (!v.is_boolean()) {
        throw InputError(file_, field(key), "expected true or false, found " + json_type_name(v));
    }
    return v.get<bool>();
}

bool JsonObjectReader::get_bool_or(const std::string& key, bool fallback) {
    if (!has(key) || value_.at(key).is_null()) {
        used_.insert(key);
        return fallback;
    }
    return get_bool(key);
}

JsonObjectReader JsonObjectReader::get_object(const std::string& key) {
    return JsonObjectReader(raw(key), file_, field(key));
}

void JsonObjectReader::reject_unknown_keys() const {
    for (auto it = value_.begin(); it != value_.end(); ++it) {
        if (!used_.count(it.key())) {
            throw InputError(file_, field(it.key()), "unknown field");
        }
    }
}

}  // namespace meshwork
