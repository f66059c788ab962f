// The token data of a run: a seeded synthetic stream, or tokens read from a file. Sequence g
// of step s is the same for every layout, so every layout sees identical batches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshwork::engine {

class TokenStream {
public:
    // A deterministic stream with some structure to learn (each token depends on the
    // previous one), drawn from the counter stream of `seed`.
    static TokenStream synthetic(std::uint64_t seed, int vocab);
    // Whitespace-separated integers in [0, vocab). Throws InputError naming the file (and
    // the line of a bad token) when it is missing, malformed, or shorter than min_tokens.
    static TokenStream from_file(const std::string& path, int vocab, std::size_t min_tokens);

    // The `length` tokens of global sequence `sequence` of step `step` (the inputs plus the
    // next token as the last target).
    [[nodiscard]] std::vector<std::int32_t> sequence(int step, int sequence, int length,
                                                     int global_batch) const;

private:
    std::uint64_t seed_ = 0;
    int vocab_ = 0;
    std::vector<std::int32_t> tokens_;  // empty = synthetic
};

}  // namespace meshwork::engine
