#include "core/export/shell_parse_cache.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

#include "core/export/text_file.h"

namespace meshwork::shell {

namespace {

// Budget units (a unit ≈ 4 ns, shell_script.cpp kBudgetUnits) of reading one byte of text
// into tokens, names and a tree, lexer and parser together. Measured with
// bench/bench_shell_parse.cpp (Release, this 2-core machine under other builds, CPU time, 3
// repetitions): lex_shell + assigned_names + parse_shell on the real Megatron-LM scripts of
// ../shared/realworld/megatron 28.1 MB/s = 35.6 ns a byte; one budget unit spent by the
// interpreter's loops 325.6 M/s = 3.07 ns; 35.6 / 3.07 = 11.6, rounded up.
// docs/RELIABILITY.md, "import-args".
constexpr long long kParseUnitsPerByte = 12;
// A text found in the cache costs its hashing and one comparison: about a byte read each.
constexpr long long kLookupUnitsPerByte = 2;

}  // namespace

std::size_t ParseCache::KeyHash::operator()(const Key& k) const {
    return std::hash<std::string>{}(k.text) ^ (std::hash<int>{}(k.line) * 31 + (k.internal ? 1 : 0));
}

const Parsed& ParseCache::parse(const std::string& text, const std::string& file, bool internal, int line) {
    budget_.spend(kLookupUnitsPerByte * static_cast<long long>(text.size()) + 1);
    Key key{text, internal, line};
    if (const auto it = parsed_.find(key); it != parsed_.end()) return it->second;
    budget_.spend(kParseUnitsPerByte * static_cast<long long>(text.size()));
    Lexed lexed = lex_shell(text, file, internal);
    if (line > 0) {
        for (auto& t : lexed.tokens) t.line = line;
    }
    Parsed p;
    p.assigned = assigned_names(lexed.tokens);
    p.tree = parse_shell(lexed, file);
    p.sbatch = std::move(lexed.sbatch);
    return parsed_.emplace(std::move(key), std::move(p)).first->second;
}

const std::string& ParseCache::file_text(const std::string& path) {
    if (const auto it = files_.find(path); it != files_.end()) return it->second;
    std::string text = read_text_input(path);
    return files_.emplace(path, std::move(text)).first->second;
}

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

bool is_name(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
    return std::all_of(s.begin(), s.end(), is_name_char);
}

namespace {

// The names an arithmetic command assigns: NAME followed by an assignment operator, or
// next to ++ / --.
void arith_assigned(const std::string& e, std::set<std::string>& out) {
    for (std::size_t i = 0; i < e.size();) {
        if (!is_name_char(e[i]) || std::isdigit(static_cast<unsigned char>(e[i])) != 0) {
            ++i;
            continue;
        }
        const std::size_t start = i;
        while (i < e.size() && is_name_char(e[i])) ++i;
        std::size_t j = i;
        while (j < e.size() && e[j] == ' ') ++j;
        const std::string after = e.substr(j, 3);
        const bool assigns = (after.rfind('=', 0) == 0 && after.rfind("==", 0) != 0) ||
                             (after.size() >= 2 && after[1] == '=' && std::string("+-*/%&|^").find(after[0]) != std::string::npos) ||
                             after.rfind("<<=", 0) == 0 || after.rfind(">>=", 0) == 0 || after.rfind("++", 0) == 0 ||
                             after.rfind("--", 0) == 0 || (start >= 2 && (e.compare(start - 2, 2, "++") == 0 || e.compare(start - 2, 2, "--") == 0));
        if (assigns) out.insert(e.substr(start, i - start));
    }
}

}  // namespace

std::vector<std::string> assigned_names(const std::vector<Token>& tokens) {
    std::set<std::string> out;
    for (std::size_t k = 0; k < tokens.size(); ++k) {
        const Token& t = tokens[k];
        if (t.kind == Token::Array) out.insert(t.text);
        if (t.kind == Token::Arith) {  // ((X = ...)), ((X++)), for ((i = 0; ...))
            arith_assigned(t.text, out);
            continue;
        }
        if (t.kind != Token::Word) continue;
        const auto eq = t.text.find('=');
        if (eq != std::string::npos && eq > 0) {
            std::string name = t.text.substr(0, eq);
            if (!name.empty() && name.back() == '+') name.pop_back();
            if (const auto open = name.find('['); open != std::string::npos) name = name.substr(0, open);
            if (is_name(name)) out.insert(name);
        }
        if ((t.text == "for" || t.text == "local" || t.text == "declare" || t.text == "typeset") && k + 1 < tokens.size()) {
            out.insert(tokens[k + 1].text);
        }
    }
    return {out.begin(), out.end()};
}

}  // namespace meshwork::shell
