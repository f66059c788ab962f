#include "profiler/remote/peer_json.h"

#include <utility>

namespace meshwork::profiler::remote {

namespace {

using nlohmann::json;

std::string shown_value(const json& v) {
    if (v.is_string()) {
        std::string s = v.get<std::string>().substr(0, 40);
        for (char& c : s) {
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
        }
        return "the string \"" + s + (v.get<std::string>().size() > 40 ? "...\"" : "\"");
    }
    if (v.is_number() || v.is_boolean()) return v.dump();  // a scalar: dump() does not recurse
    return json_type_words(v);
}

}  // namespace

std::string json_type_words(const json& v) {
    switch (v.type()) {
        case json::value_t::null: return "null";
        case json::value_t::object: return "an object";
        case json::value_t::array: return "an array";
        case json::value_t::string: return "a string";
        case json::value_t::boolean: return "true or false";
        case json::value_t::number_integer:
        case json::value_t::number_unsigned: return "an integer";
        case json::value_t::number_float: return "a number with a fraction";
        case json::value_t::binary: return "binary data";
        case json::value_t::discarded: return "nothing";
    }
    return "something else";
}

namespace {

// A first, DOM-less pass that counts values and depth and stops at a bound. (nlohmann's
// parse callback cannot do this: its DOM builder rescans the parent array at the end of
// every object, which makes a line of 300,000 "{}" take minutes.)
class Bounds : public nlohmann::json_sax<json> {
public:
    explicit Bounds(std::size_t max_values) : max_values_(max_values) {}
    std::string why;

    bool null() override { return value(); }
    bool boolean(bool) override { return value(); }
    bool number_integer(number_integer_t) override { return value(); }
    bool number_unsigned(number_unsigned_t) override { return value(); }
    bool number_float(number_float_t, const string_t&) override { return value(); }
    bool string(string_t&) override { return value(); }
    bool binary(binary_t&) override { return value(); }
    bool start_object(std::size_t) override { return open(); }
    bool key(string_t&) override { return value(); }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        why = "syntax";
        return false;
    }

private:
    bool value() {
        if (++values_ <= max_values_) return true;
        why = "more than " + std::to_string(max_values_) + " JSON values in one message";
        return false;
    }
    bool open() {
        if (++depth_ > kMaxJsonDepth) {
            why = "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
            return false;
        }
        return value();
    }
    bool close() {
        --depth_;
        return true;
    }

    std::size_t max_values_;
    std::size_t values_ = 0;
    int depth_ = 0;
};

}  // namespace

json parse_peer_json(std::string_view line, const std::string& where, std::size_t max_values) {
    auto not_json = [&] {
        std::string start(line.substr(0, 60));
        for (char& c : start) {
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
        }
        return PeerError(where + ": not a JSON line (it starts \"" + start + (line.size() > 60 ? "...\")" : "\")"));
    };
    Bounds bounds(max_values);
    if (!json::sax_parse(line.begin(), line.end(), &bounds)) {
        if (bounds.why == "syntax" || bounds.why.empty()) throw not_json();
        throw PeerError(where + ": " + bounds.why);
    }
    json out = json::parse(line.begin(), line.end(), nullptr, false);
    if (out.is_discarded()) throw not_json();
    return out;
}

PeerObject::PeerObject(const json& j, std::string where, std::string path)
    : j_(j), where_(std::move(where)), path_(std::move(path)) {
    if (!j_.is_object()) {
        throw PeerError(where_ + ": " + (path_.empty() ? std::string("the message") : "field '" + path_ + "'") +
                        " should be an object (it is " + json_type_words(j_) + ")");
    }
}

std::string PeerObject::field(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

void PeerObject::wrong(const char* key, const std::string& want) const {
    const auto it = j_.find(key);
    throw PeerError(where_ + ": field '" + field(key) + "' should be " + want + " (" +
                    (it == j_.end() ? std::string("it is missing") : "it is " + shown_value(*it)) + ")");
}

bool PeerObject::has(const char* key) const { return j_.contains(key); }

const json& PeerObject::raw(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end()) wrong(key, "present");
    return *it;
}

std::int64_t PeerObject::integer(const char* key, std::int64_t lo, std::int64_t hi) const {
    const auto it = j_.find(key);
    const std::string want = "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
    if (it == j_.end() || !it->is_number_integer()) wrong(key, want);
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) wrong(key, want);
    const auto v = it->get<std::int64_t>();
    if (v < lo || v > hi) wrong(key, want);
    return v;
}

double PeerObject::number(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end() || !it->is_number()) wrong(key, "a number");
    return it->get<double>();
}

bool PeerObject::boolean(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end() || !it->is_boolean()) wrong(key, "true or false");
    return it->get<bool>();
}

const std::string& PeerObject::text(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end() || !it->is_string()) wrong(key, "a string");
    return it->get_ref<const std::string&>();
}

const json& PeerObject::array(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end() || !it->is_array()) wrong(key, "an array");
    return *it;
}

PeerObject PeerObject::object(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end() || !it->is_object()) wrong(key, "an object");
    return PeerObject(*it, where_, field(key));
}

std::int64_t peer_integer(const json& v, const std::string& where, const std::string& field, std::int64_t lo,
                          std::int64_t hi) {
    const bool fits = v.is_number_integer() &&
                      !(v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) &&
                      v.get<std::int64_t>() >= lo && v.get<std::int64_t>() <= hi;
    if (!fits) {
        throw PeerError(where + ": field '" + field + "' should be an integer in " + std::to_string(lo) + ".." +
                        std::to_string(hi) + " (it is " + shown_value(v) + ")");
    }
    return v.get<std::int64_t>();
}

double peer_number(const json& v, const std::string& where, const std::string& field) {
    if (!v.is_number()) throw PeerError(where + ": field '" + field + "' should be a number (it is " + shown_value(v) + ")");
    return v.get<double>();
}

}  // namespace meshwork::profiler::remote
