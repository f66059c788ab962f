#include "import/json_event_stream.h"

#include <vector>

#include "common/error.h"

namespace meshwork::profiler {

namespace {

class StreamingSax {
public:
    StreamingSax(std::string array_key, const std::function<void(std::size_t, const Json&)>& fn)
        : array_key_(std::move(array_key)), fn_(fn) {}

    bool null() { return value(Json(nullptr)); }
    bool boolean(bool v) { return value(Json(v)); }
    bool number_integer(Json::number_integer_t v) { return value(Json(v)); }
    bool number_unsigned(Json::number_unsigned_t v) { return value(Json(v)); }
    bool number_float(Json::number_float_t v, const std::string&) { return value(Json(v)); }
    bool string(std::string& v) { return value(Json(std::move(v))); }
    bool binary(Json::binary_t&) { return value(Json()); }

    bool start_object(std::size_t) { return open(Json::object()); }
    bool start_array(std::size_t) { return open(Json::array()); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    bool key(std::string& k) {
        key_ = std::move(k);
        if (depth_ == 1) top_key_ = key_;
        return true;
    }

    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
        error_ = e.what();
        auto pos = error_.find("] ");
        if (pos != std::string::npos) error_ = error_.substr(pos + 2);
        error_ = "malformed JSON at byte " + std::to_string(position) + ": " + error_;
        return false;
    }

    Json top;
    std::string error_;
    bool saw_array = false;
    bool top_not_object = false;

private:
    // Inside the streamed array, elements are built in `element_` and handed off whole.
    [[nodiscard]] bool in_stream() const { return streaming_ && depth_ >= 2; }

    bool open(Json container) {
        ++depth_;
        if (depth_ > kMaxJsonDepth) {
            error_ = "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
            return false;
        }
        if (depth_ == 1) {
            if (!container.is_object()) {
                top_not_object = true;
                return false;
            }
            stack_.push_back(&top);
            top = Json::object();
            return true;
        }
        if (depth_ == 2 && top_key_ == array_key_ && container.is_array()) {
            streaming_ = true;
            saw_array = true;
            stack_.push_back(nullptr);  // the array itself is never stored
            return true;
        }
        if (streaming_ && depth_ == 3) {
            element_ = std::move(container);
            stack_.push_back(&element_);
            return true;
        }
        Json* parent = stack_.back();
        Json* child = nullptr;
        if (parent->is_object()) {
            child = &((*parent)[key_] = std::move(container));
        } else {
            parent->push_back(std::move(container));
            child = &parent->back();
        }
        stack_.push_back(child);
        return true;
    }

    bool close() {
        if (streaming_ && depth_ == 3) {
            fn_(index_++, element_);
            element_ = Json();
        }
        if (streaming_ && depth_ == 2) streaming_ = false;
        stack_.pop_back();
        --depth_;
        return true;
    }

    bool value(Json v) {
        if (depth_ == 0) {
            top_not_object = true;
            return false;
        }
        if (streaming_ && depth_ == 2) {  // a scalar element of the array
            fn_(index_++, v);
            return true;
        }
        Json* parent = stack_.back();
        if (parent->is_object()) (*parent)[key_] = std::move(v);
        else parent->push_back(std::move(v));
        return true;
    }

    std::string array_key_;
    const std::function<void(std::size_t, const Json&)>& fn_;
    std::vector<Json*> stack_;
    Json element_;
    std::string key_, top_key_;
    int depth_ = 0;
    bool streaming_ = false;
    std::size_t index_ = 0;
};

}  // namespace

Json stream_json_array(const std::string& text, const std::string& file, const std::string& array_key,
                       const std::function<void(std::size_t, const Json&)>& on_element) {
    StreamingSax sax(array_key, on_element);
    const bool ok = Json::sax_parse(text, &sax, Json::input_format_t::json, /*strict=*/true);
    if (sax.top_not_object) throw InputError(file, "", "expected a JSON object at the top level");
    if (!ok) throw InputError(file, "", sax.error_.empty() ? "malformed JSON" : sax.error_);
    if (!sax.saw_array) throw InputError(file, array_key, "missing (or not an array)");
    return std::move(sax.top);
}

}  // namespace meshwork::profiler
