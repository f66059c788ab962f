// Pattern matching for the bash interpreter, in time linear in the text for a given pattern:
// bash's glob patterns (case, [[ == ]], ${V#p} ${V%p} ${V/p/r}) and POSIX extended regular
// expressions ([[ s =~ re ]]). Both are compiled to a nondeterministic automaton that is run
// over the text with a set of states (Thompson's construction): no backtracking, so
// `^(a|a)*b$` on 10,000 a's costs 10,000 steps of a few states, not 2^10,000. Every step is
// paid from the interpreter's Budget.
#pragma once

#include <bitset>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/export/shell_value.h"

namespace meshwork::shell {

// A bash glob pattern: * ? [...] ([!...], [^...], ranges, [:class:]) and \ escapes.
class Glob {
public:
    explicit Glob(const std::string& pattern);
    [[nodiscard]] bool matches(std::string_view s, Budget& budget) const;
    // The length of the longest (or shortest) prefix of `s` that matches; npos when none.
    [[nodiscard]] std::size_t prefix(std::string_view s, bool longest, Budget& budget) const;
    // The same pattern read backwards: a suffix of s matches this iff the reversed suffix
    // matches the reversed pattern.
    [[nodiscard]] Glob reversed() const;

private:
    Glob() = default;
    struct Elem {
        enum Kind { Set, Star } kind = Set;
        std::bitset<256> set;
    };
    void closure(std::vector<char>& active) const;
    bool step(const std::vector<char>& active, unsigned char c, std::vector<char>& next) const;
    std::vector<Elem> elems_;
};

// [[ s =~ re ]]: whether the POSIX extended regular expression `re` matches somewhere in `s`.
// `valid` is false for a pattern regcomp(3) would refuse (bash: the test returns 2, false) or
// one larger than kMaxRegexStates states (what the caller does with it is its choice).
bool ere_search(const std::string& re, std::string_view s, Budget& budget, bool& valid);

inline constexpr std::size_t kMaxRegexStates = 20000;

}  // namespace meshwork::shell
