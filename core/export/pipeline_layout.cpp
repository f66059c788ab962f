#include "core/export/pipeline_layout.h"

#include <cctype>

namespace meshwork {

namespace {

constexpr std::size_t kMaxExpanded = 1 << 20;

// The count N after "*" at s[i]; false when there is none.
bool count_at(const std::string& s, std::size_t i, std::size_t& end, long long& n) {
    end = i;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end])) != 0) ++end;
    if (end == i || end - i > 7) return false;
    n = std::stoll(s.substr(i, end - i));
    return true;
}

// Unrolls "(...)*n" and "x*n" as parse_str_to_list does (parentheses first, not nested).
bool unroll(std::string s, std::string& out, std::string& error) {
    std::string no_commas;
    for (char c : s) {
        if (c != ',' && c != ' ') no_commas += c;
    }
    s = no_commas;
    std::string pass;
    for (std::size_t i = 0; i < s.size();) {
        if (s[i] == '(') {
            const auto close = s.find(')', i);
            std::size_t end = 0;
            long long n = 0;
            if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != '*' ||
                !count_at(s, close + 2, end, n)) {
                error = "'(' at " + std::to_string(i) + " is not a (...)*N group";
                return false;
            }
            const std::string body = s.substr(i + 1, close - i - 1);
            if (body.find('(') != std::string::npos) {
                error = "nested parentheses are not part of the layout syntax";
                return false;
            }
            for (long long k = 0; k < n && pass.size() < kMaxExpanded; ++k) pass += body;
            i = end;
            continue;
        }
        pass += s[i++];
    }
    for (std::size_t i = 0; i < pass.size();) {
        if (i + 1 < pass.size() && pass[i + 1] == '*') {
            std::size_t end = 0;
            long long n = 0;
            if (!count_at(pass, i + 2, end, n)) {
                error = "'*' at " + std::to_string(i + 1) + " without a count";
                return false;
            }
            for (long long k = 0; k < n && out.size() < kMaxExpanded; ++k) out += pass[i];
            i = end;
            continue;
        }
        out += pass[i++];
    }
    if (out.size() >= kMaxExpanded) {
        error = "the layout expands to more than a million entries";
        return false;
    }
    return true;
}

}  // namespace

bool parse_pipeline_layout(const std::string& text, int pp, PipelineLayout& out, std::string& error) {
    std::string flat;
    if (!unroll(text, flat, error)) return false;
    std::vector<std::string> chunks(1);
    for (char c : flat) {
        if (c == '|') {
            chunks.emplace_back();
        } else if (c == 'E' || c == 'L' || c == 't' || c == 'm') {
            chunks.back() += c;
        } else {
            error = std::string("'") + c + "' is not a layer (E embedding, t transformer, m MTP, L loss)";
            return false;
        }
    }
    if (pp < 1 || chunks.size() % static_cast<std::size_t>(pp) != 0) {
        error = std::to_string(chunks.size()) + " chunks are not a multiple of the pipeline size " +
                std::to_string(pp);
        return false;
    }
    if (flat.empty() || flat.front() != 'E' || flat.back() != 'L') {
        error = "the embedding E must come first and the loss L last";
        return false;
    }
    out = {};
    out.vpp = static_cast<int>(chunks.size() / static_cast<std::size_t>(pp));
    for (std::size_t c = 0; c < chunks.size(); ++c) {
        int layers = 0;
        for (char ch : chunks[c]) {
            if (ch == 't') ++layers;
            if (ch == 'm') ++out.mtp_layers;
            if ((ch == 'E' && c != 0) || (ch == 'L' && c + 1 != chunks.size())) {
                error = "the embedding must be on the first chunk and the loss on the last";
                return false;
            }
        }
        // Only the end chunks may hold no transformer layer: the embedding alone, or the LM
        // head and loss alone (the layout Megatron-LM's --account-for-*-in-pipeline-split builds).
        const bool end = (c == 0 && chunks.size() > 1) || (c + 1 == chunks.size() && c > 0);
        if (layers == 0 && !end) {
            error = "chunk " + std::to_string(c) + " ('" + chunks[c] +
                    "') holds no transformer layer; Meshwork's middle model chunks hold at least one";
            return false;
        }
        out.layers_per_chunk.push_back(layers);
    }
    return true;
}

std::string format_pipeline_layout(const std::vector<int>& layers_per_chunk, int mtp_layers) {
    std::string s;
    for (std::size_t c = 0; c < layers_per_chunk.size(); ++c) {
        if (c > 0) s += '|';
        if (c == 0) s += 'E';
        if (layers_per_chunk[c] == 1) s += 't';
        if (layers_per_chunk[c] > 1) s += "t*" + std::to_string(layers_per_chunk[c]);
        if (c + 1 == layers_per_chunk.size()) {
            // validate_layer_layout: as many m as --mtp-num-layers, after every t, in the
            // last virtual stage (pipeline_parallel_layer_layout.py:109-125).
            if (mtp_layers == 1) s += 'm';
            if (mtp_layers > 1) s += "m*" + std::to_string(mtp_layers);
            s += 'L';
        }
    }
    return s;
}

}  // namespace meshwork
