#include "core/export/moe_layer_pattern.h"

#include <cctype>
#include <vector>

namespace meshwork {

namespace {

// A pattern longer than any model is hostile input; stop expanding there.
constexpr std::size_t kMaxPatternLayers = 100000;

// Recursive-descent evaluator for the grammar Megatron accepts (digits , [ ] ( ) + *):
//   sum     := product ('+' product)*
//   product := atom ('*' integer)*
//   atom    := '[' integer (',' integer)* ']' | '(' sum ')'
class PatternParser {
public:
    explicit PatternParser(const std::string& text) : s_(text) {}

    bool parse(std::vector<int>& out, std::string& error) {
        if (!sum(out) || pos_ != s_.size()) {
            error = error_.empty() ? "unexpected '" + s_.substr(pos_, 1) + "' at character " +
                                         std::to_string(pos_ + 1)
                                   : error_;
            return false;
        }
        return true;
    }

private:
    bool sum(std::vector<int>& out) {
        if (!product(out)) return false;
        while (peek() == '+') {
            ++pos_;
            std::vector<int> rhs;
            if (!product(rhs)) return false;
            out.insert(out.end(), rhs.begin(), rhs.end());
            if (out.size() > kMaxPatternLayers) return fail("pattern too long");
        }
        return true;
    }
    bool product(std::vector<int>& out) {
        if (!atom(out)) return false;
        while (peek() == '*') {
            ++pos_;
            long long n = 0;
            if (!integer(n)) return false;
            if (n < 0 || out.size() * static_cast<std::size_t>(n) > kMaxPatternLayers) {
                return fail("pattern too long");
            }
            std::vector<int> rep;
            for (long long i = 0; i < n; ++i) rep.insert(rep.end(), out.begin(), out.end());
            out = std::move(rep);
        }
        return true;
    }
    bool atom(std::vector<int>& out) {
        if (peek() == '(') {
            ++pos_;
            if (!sum(out)) return false;
            if (peek() != ')') return fail("missing ')'");
            ++pos_;
            return true;
        }
        if (peek() != '[') return fail("expected '[' or '(' at character " + std::to_string(pos_ + 1));
        ++pos_;
        while (true) {
            long long v = 0;
            if (!integer(v)) return false;
            if (v != 0 && v != 1) return fail("entries must be 0 (dense) or 1 (MoE)");
            out.push_back(static_cast<int>(v));
            if (out.size() > kMaxPatternLayers) return fail("pattern too long");
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            if (peek() == ']') {
                ++pos_;
                return true;
            }
            return fail("expected ',' or ']' at character " + std::to_string(pos_ + 1));
        }
    }
    bool integer(long long& v) {
        const std::size_t start = pos_;
        v = 0;
        while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])) != 0) {
            v = v * 10 + (s_[pos_] - '0');
            if (v > static_cast<long long>(kMaxPatternLayers)) return fail("number too large");
            ++pos_;
        }
        if (pos_ == start) return fail("expected a number at character " + std::to_string(pos_ + 1));
        return true;
    }
    [[nodiscard]] char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
    bool fail(const std::string& message) {
        if (error_.empty()) error_ = message;
        return false;
    }

    std::string s_;
    std::size_t pos_ = 0;
    std::string error_;
};

}  // namespace

std::string moe_layer_freq_value(const ModelSpec& m) {
    if (!m.is_moe()) return "";
    if (m.moe.first_k_dense == 0) {
        return m.moe.layer_freq <= 1 ? "" : std::to_string(m.moe.layer_freq);
    }
    if (m.moe.layer_freq <= 1) {
        return "([0]*" + std::to_string(m.moe.first_k_dense) + "+[1]*" +
               std::to_string(m.num_layers - m.moe.first_k_dense) + ")";
    }
    std::string list = "[";
    for (int b = 0; b < m.num_layers; ++b) {
        if (b > 0) list += ",";
        list += m.is_moe_block(b) ? "1" : "0";
    }
    return list + "]";
}

bool parse_moe_layer_freq(const std::string& raw, int num_layers, int& first_k_dense,
                          int& layer_freq, std::string& error) {
    std::string text;
    for (char c : raw) {
        if (std::isspace(static_cast<unsigned char>(c)) == 0) text += c;
    }
    if (text.empty()) {
        error = "empty value";
        return false;
    }
    std::vector<int> pattern;
    if (text.find_first_of("[(") == std::string::npos) {
        long long n = 0;
        for (char c : text) {
            if (std::isdigit(static_cast<unsigned char>(c)) == 0) {
                error = "expected an integer or a list expression such as ([0]*3+[1]*58)";
                return false;
            }
            n = n * 10 + (c - '0');
            if (n > static_cast<long long>(kMaxPatternLayers)) break;
        }
        if (n < 1 || n > num_layers) {
            error = "the frequency must be between 1 and the number of layers";
            return false;
        }
        first_k_dense = 0;
        layer_freq = static_cast<int>(n);
        return true;
    }
    PatternParser parser(text);
    if (!parser.parse(pattern, error)) return false;
    if (static_cast<long long>(pattern.size()) != num_layers) {
        error = "the pattern has " + std::to_string(pattern.size()) + " entries for " +
                std::to_string(num_layers) + " layers";
        return false;
    }
    int k = 0;
    while (k < num_layers && pattern[static_cast<std::size_t>(k)] == 0) ++k;
    if (k == num_layers) {
        error = "the pattern has no MoE layer";
        return false;
    }
    int freq = 1;
    while (k + freq < num_layers && pattern[static_cast<std::size_t>(k + freq)] == 0) ++freq;
    for (int b = 0; b < num_layers; ++b) {
        const int expect = (b >= k && (b - k) % freq == 0) ? 1 : 0;
        if (pattern[static_cast<std::size_t>(b)] != expect) {
            error = "layer " + std::to_string(b) +
                    " breaks the only shape Meshwork models (k dense layers, then one MoE layer "
                    "every N)";
            return false;
        }
    }
    first_k_dense = k;
    layer_freq = freq;
    return true;
}

}  // namespace meshwork
