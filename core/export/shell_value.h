// A value in the bash interpreter (shell_script.cpp): text some of whose spans are unknown
// (a command substitution, a variable from the environment). An unknown is a span with the
// index of its record (its reason), never text: no string a script writes can forge one.
// The text of an unknown span is the unknown as written in the script, for messages.
//
// The interpreter's budget of work lives here too: every step it takes (a command run, a
// byte expanded, a state of a pattern match) is paid from one Budget, so that no script,
// however written, runs for long (docs/RELIABILITY.md, "import-args").
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace meshwork::shell {

struct Value {
    struct Span {
        std::size_t at = 0;    // offset in `text`
        std::size_t size = 0;  // bytes of `text` the unknown is shown as
        int id = 0;            // its record in the interpreter
    };
    std::string text;
    std::vector<Span> spans;  // in order, not overlapping

    Value() = default;
    Value(std::string s) : text(std::move(s)) {}  // NOLINT(google-explicit-constructor): known text
    static Value unknown(std::string shown, int id) {
        Value v;
        v.text = std::move(shown);
        v.spans.push_back({0, v.text.size(), id});
        return v;
    }

    [[nodiscard]] bool known() const { return spans.empty(); }
    // The first unknown's record, or -1.
    [[nodiscard]] int first_unknown() const { return spans.empty() ? -1 : spans.front().id; }
    [[nodiscard]] bool empty() const { return text.empty() && spans.empty(); }

    Value& operator+=(const Value& v) {
        for (const auto& s : v.spans) spans.push_back({s.at + text.size(), s.size, s.id});
        text += v.text;
        return *this;
    }
    Value& operator+=(const std::string& s) {
        text += s;
        return *this;
    }
    Value& operator+=(char c) {
        text += c;
        return *this;
    }
    void clear() {
        text.clear();
        spans.clear();
    }
    // The span that covers offset `i`, or nullptr (binary search: spans are in order).
    [[nodiscard]] const Span* span_at(std::size_t i) const {
        const auto after = std::upper_bound(spans.begin(), spans.end(), i,
                                            [](std::size_t x, const Span& s) { return x < s.at; });
        if (after == spans.begin()) return nullptr;
        const Span& s = *(after - 1);
        return i < s.at + s.size ? &s : nullptr;
    }
    // Walks the value in order: each unknown span, whole, to `on_unknown` (as a Value of its
    // own), each known byte to `on_char`.
    template <class OnUnknown, class OnChar>
    void for_each_piece(OnUnknown&& on_unknown, OnChar&& on_char) const {
        std::size_t next_span = 0;
        for (std::size_t i = 0; i < text.size();) {
            if (next_span < spans.size() && spans[next_span].at == i) {
                const Span& s = spans[next_span++];
                on_unknown(Value::unknown(text.substr(s.at, s.size), s.id));
                i = s.at + s.size;
                continue;
            }
            on_char(text[i++]);
        }
    }
};

// Thrown when the budget is spent; the interpreter turns it into an InputError naming the
// line it was running.
struct BudgetExhausted {};

class Budget {
public:
    explicit Budget(long long units) : left_(units), total_(units) {}
    void spend(long long units) {
        left_ -= units;
        if (left_ < 0) throw BudgetExhausted{};
    }
    [[nodiscard]] long long total() const { return total_; }

private:
    long long left_;
    long long total_;
};

}  // namespace meshwork::shell
