#include "core/engine/token_stream.h"

#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "core/engine/counter_rng.h"

namespace meshwork::engine {

TokenStream TokenStream::synthetic(std::uint64_t seed, int vocab) {
    TokenStream t;
    t.seed_ = seed;
    t.vocab_ = vocab;
    return t;
}

TokenStream TokenStream::from_file(const std::string& path, int vocab, std::size_t min_tokens) {
    std::ifstream in(path);
    if (!in) throw InputError(path, "--tokens", "cannot open the token file");
    TokenStream t;
    t.vocab_ = vocab;
    std::string line;
    for (int line_no = 1; std::getline(in, line); ++line_no) {
        std::istringstream words(line);
        std::string w;
        while (words >> w) {
            std::size_t used = 0;
            long long v = -1;
            try {
                v = std::stoll(w, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != w.size() || v < 0 || v >= vocab) {
                throw InputError(path, "line " + std::to_string(line_no),
                                 "'" + w + "' is not a token id in [0, " + std::to_string(vocab) + ")");
            }
            t.tokens_.push_back(static_cast<std::int32_t>(v));
        }
    }
    if (t.tokens_.size() < min_tokens) {
        throw InputError(path, "--tokens", "holds " + std::to_string(t.tokens_.size()) +
                                               " tokens, a sequence needs " + std::to_string(min_tokens));
    }
    return t;
}

std::vector<std::int32_t> TokenStream::sequence(int step, int sequence, int length,
                                                int global_batch) const {
    std::vector<std::int32_t> out(static_cast<std::size_t>(length));
    const std::uint64_t index = static_cast<std::uint64_t>(step) * static_cast<std::uint64_t>(global_batch) +
                                static_cast<std::uint64_t>(sequence);
    if (!tokens_.empty()) {
        // Consecutive windows, wrapping around the file.
        const std::size_t span = tokens_.size() - static_cast<std::size_t>(length) + 1;
        const std::size_t start = (index * static_cast<std::uint64_t>(length - 1)) % span;
        for (int i = 0; i < length; ++i) out[static_cast<std::size_t>(i)] = tokens_[start + static_cast<std::size_t>(i)];
        return out;
    }
    // t[i+1] = (3·t[i] + 1 + noise) mod vocab with noise ∈ {0..3}: predictable up to 2 bits.
    const std::uint64_t s = mix64(seed_ ^ mix64(index + 0x5EED));
    std::uint64_t t = s % static_cast<std::uint64_t>(vocab_);
    for (int i = 0; i < length; ++i) {
        out[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(t);
        const std::uint64_t noise = mix64(s + static_cast<std::uint64_t>(i)) & 3u;
        t = (3 * t + 1 + noise) % static_cast<std::uint64_t>(vocab_);
    }
    return out;
}

}  // namespace meshwork::engine
