#include "core/export/shell_lexer.h"

#include <cctype>

#include "core/common/error.h"

namespace meshwork::shell {

namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }
Token tok(Token::Kind kind, std::string text, int line) {
    Token t;
    t.kind = kind;
    t.text = std::move(text);
    t.line = line;
    return t;
}

bool is_op_char(char c) { return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>'; }

class Lexer {
public:
    Lexer(const std::string& s, const std::string& file, bool internal) : s_(s), file_(file), internal_(internal) {}

    Lexed run() {
        if (const auto nul = s_.find('\0'); nul != std::string::npos && !internal_) {
            count_lines(0, nul);
            fail(line_, "a NUL byte: bash cannot pass one in an argument (the text is not a script)");
        }
        while (i_ < s_.size()) {
            const char c = s_[i_];
            if (c == '(' && next() == '(' && (command_start_ || after_for_) && arith_command()) continue;
            if (c == '\\' && next() == '\n') {
                i_ += 2;
                ++line_;
                continue;
            }
            if (c == ' ' || c == '\t' || c == '\r') {
                ++i_;
                continue;
            }
            if (c == '\n') {
                op("\n");
                ++i_;
                ++line_;
                skip_heredocs();
                continue;
            }
            if (c == '#') {
                comment();
                continue;
            }
            if (dbracket_ && regex_next_) {  // [[ s =~ RE ]]: RE is one word, ( ) | and all
                regex_word();
                continue;
            }
            if (dbracket_) {  // inside [[ ... ]]: operators are words
                if (c == '&' && next() == '&') { word_token("&&", 2); continue; }
                if (c == '|' && next() == '|') { word_token("||", 2); continue; }
                if (c == '(' || c == ')' || c == '<' || c == '>') { word_token(std::string(1, c), 1); continue; }
            }
            if (std::isdigit(static_cast<unsigned char>(c)) != 0 && redirect_after_digits()) continue;
            if ((c == '<' || c == '>') && next() == '(') {
                process_substitution();
                continue;
            }
            if (is_op_char(c)) {
                operator_token();
                continue;
            }
            word();
        }
        op("\n");
        out_.tokens.push_back(tok(Token::End, "", line_));
        return std::move(out_);
    }

private:
    [[nodiscard]] char next(std::size_t k = 1) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
    [[noreturn]] void fail(int line, const std::string& message) const {
        throw InputError(file_, "line " + std::to_string(line), message);
    }
    void op(const std::string& o) {
        out_.tokens.push_back(tok(Token::Op, o, line_));
        command_start_ = true;  // after ; && | ( ) and the ) of a case pattern
        after_for_ = false;
    }
    void word_token(const std::string& w, std::size_t n) {
        out_.tokens.push_back(tok(Token::Word, w, line_));
        i_ += n;
    }

    // Recursion guard for $( "$( ...: the lexer recurses into quotes and substitutions.
    struct Nest {
        Nest(Lexer& l, int line) : l_(l) {
            if (++l_.depth_ > kMaxNesting) {
                l_.fail(line, "quotes and substitutions nested more than " + std::to_string(kMaxNesting) + " deep");
            }
        }
        ~Nest() { --l_.depth_; }
        Nest(const Nest&) = delete;
        Nest& operator=(const Nest&) = delete;
        Lexer& l_;
    };

    // (( expression )) where a command starts, or after `for`: one Arith token. bash reads
    // `((` as arithmetic when the matching `))` closes it; otherwise it is two subshells.
    bool arith_command() {
        int depth = 0;
        for (std::size_t j = i_; j < s_.size(); ++j) {
            const char c = s_[j];
            if (c == '\\' || c == '\'' || c == '"' || c == '`') return false;  // not plain arithmetic
            if (c == '(') ++depth;
            if (c == ')' && --depth == 1) {
                if (j + 1 >= s_.size() || s_[j + 1] != ')') return false;
                const std::string body = s_.substr(i_ + 2, j - i_ - 2);
                out_.tokens.push_back(tok(Token::Arith, body, line_));
                count_lines(i_, j);
                i_ = j + 2;
                command_start_ = false;
                after_for_ = false;
                return true;
            }
        }
        return false;
    }

    void comment() {
        const std::size_t start = i_;
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        const std::string text = s_.substr(start, i_ - start);
        if (text.rfind("#SBATCH", 0) == 0) out_.sbatch.push_back({line_, text.substr(7)});
    }

    // 2>&1, 2>/dev/null, 1>>log: a file-descriptor number glued to a redirection.
    bool redirect_after_digits() {
        std::size_t j = i_;
        while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j])) != 0) ++j;
        if (j >= s_.size() || (s_[j] != '>' && s_[j] != '<')) return false;
        i_ = j;
        operator_token();
        return true;
    }

    void operator_token() {
        static const char* const kOps[] = {"<<<", "<<-", "&>>", ";;", "&&", "||", "|&", "<<", ">>", ">&",
                                           "<&", "&>", ">|", "<>", ";", "&", "|", "(", ")", "<", ">"};
        for (const char* o : kOps) {
            const std::string sop(o);
            if (s_.compare(i_, sop.size(), sop) != 0) continue;
            i_ += sop.size();
            const bool redirect = sop.find('<') != std::string::npos || sop.find('>') != std::string::npos;
            if (!redirect) {
                op(sop);
                return;
            }
            out_.tokens.push_back(tok(Token::Redirect, sop, line_));
            if (sop == "<<" || sop == "<<-") heredoc(sop == "<<-");
            return;  // the redirection's target follows, then the command goes on
        }
        fail(line_, std::string("unexpected '") + s_[i_] + "'");
    }

    // The delimiter of a here-document; its body is skipped at the end of the line.
    void heredoc(bool strip_tabs) {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
        std::string delim;
        bool quoted = false;
        while (i_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[i_])) && !is_op_char(s_[i_])) {
            if (s_[i_] != '\'' && s_[i_] != '"' && s_[i_] != '\\') delim += s_[i_];
            else quoted = true;
            ++i_;
        }
        if (delim.empty()) fail(line_, "a here-document without a delimiter");
        out_.tokens.push_back(tok(Token::Word, "''", line_));  // the target, empty
        out_.tokens.back().heredoc = true;
        out_.tokens.back().heredoc_quoted = quoted;
        pending_.push_back({delim, strip_tabs, line_, out_.tokens.size() - 1});
    }
    // Reads the bodies of the here-documents opened on the line that just ended.
    void skip_heredocs() {
        for (const auto& h : pending_) {
            bool found = false;
            std::string body;
            while (i_ < s_.size()) {
                std::size_t end = s_.find('\n', i_);
                if (end == std::string::npos) end = s_.size();
                std::string l = s_.substr(i_, end - i_);
                if (h.strip_tabs) l.erase(0, l.find_first_not_of('\t') == std::string::npos ? l.size() : l.find_first_not_of('\t'));
                if (!l.empty() && l.back() == '\r') l.pop_back();
                i_ = end < s_.size() ? end + 1 : end;
                ++line_;
                if (l == h.delim) {
                    found = true;
                    break;
                }
                body += l + "\n";
            }
            if (!found) fail(h.line, "the here-document '" + h.delim + "' is not terminated");
            out_.tokens[h.token].heredoc_body = std::move(body);
        }
        pending_.clear();
    }

    // A word with its quotes; `(` right after NAME= or NAME+= opens an array.
    void word() {
        const int start_line = line_;
        std::string w;
        while (i_ < s_.size()) {
            const char c = s_[i_];
            if (c == '\\') {
                if (next() == '\n') {
                    i_ += 2;
                    ++line_;
                    continue;
                }
                w += c;
                if (i_ + 1 < s_.size()) w += s_[i_ + 1];
                i_ += 2;
                continue;
            }
            if (c == '\'') {
                w += single_quoted();
                continue;
            }
            if (c == '"') {
                w += double_quoted();
                continue;
            }
            if (c == '$' || c == '`') {
                w += dollar();
                continue;
            }
            if (c == '(' && !w.empty() && w.back() == '=' && assignment_name(w)) {
                array(w, start_line);
                return;
            }
            // <Specify path> after '=' or '/' is a placeholder authors leave for the reader,
            // not a redirection: kept literally.
            if (c == '<' && !w.empty() && (w.back() == '=' || w.back() == '/')) {
                const std::size_t end = s_.find_first_of(">\n", i_);
                if (end != std::string::npos && s_[end] == '>') {
                    w += "'" + s_.substr(i_, end + 1 - i_) + "'";
                    i_ = end + 1;
                    continue;
                }
            }
            // Inside [[ ]] a word such as a regex keeps its ( ) and |.
            if (dbracket_ && !w.empty() && (c == '(' || c == ')' || c == '|')) {
                w += c;
                ++i_;
                continue;
            }
            // bash splits words at blanks and newlines only (\v and \f are word characters).
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || is_op_char(c)) break;
            w += c;
            ++i_;
        }
        if (w.empty()) {  // nothing a word can start with: skip the character
            ++i_;
            return;
        }
        out_.tokens.push_back(tok(Token::Word, w, start_line));
        if (w == "[[") dbracket_ = true;
        if (w == "]]") dbracket_ = false;
        regex_next_ = dbracket_ && w == "=~";
        // After these reserved words a command starts (where `((` is arithmetic).
        static const char* const kBefore[] = {"then", "do", "else", "elif", "if", "while", "until", "{", "!", "time"};
        command_start_ = false;
        for (const char* r : kBefore) command_start_ = command_start_ || w == r;
        after_for_ = w == "for";
    }

    // The regex after =~: up to a blank outside parentheses (bash's parse.y reads it so).
    void regex_word() {
        regex_next_ = false;
        const int start_line = line_;
        std::string w;
        int depth = 0;
        while (i_ < s_.size()) {
            const char c = s_[i_];
            if (depth == 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) break;
            if (c == '\\') {
                w += s_.substr(i_, 2);
                i_ += 2;
                continue;
            }
            if (c == '\'') {
                w += single_quoted();
                continue;
            }
            if (c == '"') {
                w += double_quoted();
                continue;
            }
            const char n = next();
            if (c == '`' || (c == '$' && (is_name_char(n) || n == '{' || n == '(' || n == '@' || n == '*' ||
                                          n == '#' || n == '?' || n == '!' || n == '-'))) {
                w += dollar();
                continue;
            }
            // A lone $ in a regex is the end anchor (dollar() would escape it as a literal).
            if (c == '\n') ++line_;
            if (c == '(') ++depth;
            if (c == ')') --depth;
            w += c;
            ++i_;
        }
        out_.tokens.push_back(tok(Token::Word, w, start_line));
        command_start_ = false;
    }

    static bool assignment_name(const std::string& w) {
        std::size_t n = w.size() - 1;  // without '='
        if (n > 0 && w[n - 1] == '+') --n;
        if (n == 0 || std::isdigit(static_cast<unsigned char>(w[0])) != 0) return false;
        for (std::size_t k = 0; k < n; ++k) {
            if (!is_name_char(w[k])) return false;
        }
        return true;
    }

    void array(const std::string& w, int start_line) {
        Token t = tok(Token::Array, "", start_line);
        t.append = w.size() >= 2 && w[w.size() - 2] == '+';
        t.text = w.substr(0, w.size() - (t.append ? 2 : 1));
        ++i_;  // '('
        while (true) {
            while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])) != 0) {
                if (s_[i_] == '\n') ++line_;
                ++i_;
            }
            if (i_ >= s_.size()) fail(start_line, "the array " + t.text + "=( is not closed");
            if (s_[i_] == '\\' && next() == '\n') {
                i_ += 2;
                ++line_;
                continue;
            }
            if (s_[i_] == '#') {
                comment();
                continue;
            }
            if (s_[i_] == ')') {
                ++i_;
                break;
            }
            const std::size_t before = out_.tokens.size();
            word();
            if (out_.tokens.size() == before || out_.tokens.back().kind != Token::Word) {
                fail(line_, "unexpected text in the array " + t.text);
            }
            if (out_.tokens.back().text.empty()) fail(line_, std::string("unexpected '") + s_[i_] + "' in the array " + t.text);
            t.items.push_back(out_.tokens.back().text);
            out_.tokens.pop_back();
        }
        out_.tokens.push_back(std::move(t));
    }

    // A '...' quote at i_, as written (quotes kept); nothing inside it is special.
    std::string single_quoted() {
        const std::size_t end = s_.find('\'', i_ + 1);
        if (end == std::string::npos) fail(line_, "unterminated ' quote");
        count_lines(i_, end);
        std::string quoted = s_.substr(i_, end + 1 - i_);
        i_ = end + 1;
        return quoted;
    }

    std::string double_quoted() {
        const int start_line = line_;
        const Nest nest(*this, start_line);
        std::string w = "\"";
        ++i_;
        while (i_ < s_.size() && s_[i_] != '"') {
            const char c = s_[i_];
            if (c == '\\' && i_ + 1 < s_.size()) {
                if (s_[i_ + 1] == '\n') ++line_;
                w += s_.substr(i_, 2);
                i_ += 2;
                continue;
            }
            if (c == '$' || c == '`') {
                w += dollar();
                continue;
            }
            if (c == '\n') ++line_;
            w += c;
            ++i_;
        }
        if (i_ >= s_.size()) fail(start_line, "unterminated \" quote");
        ++i_;
        return w + "\"";
    }

    // <(list) and >(list): bash runs the list beside the command and passes a pipe's path
    // as the word (`exec > >(tee log)`, `diff <(a) <(b)`). The list only reads or writes
    // that pipe, so it is skipped, and the word is the path bash would pass.
    void process_substitution() {
        const int start_line = line_;
        const Nest nest(*this, start_line);
        ++i_;  // '<' or '>'
        skip_group('(', start_line, "unterminated process substitution");
        out_.tokens.push_back(tok(Token::Word, "/dev/fd/63", start_line));
        command_start_ = false;
        after_for_ = false;
    }

    // From the `open` at i_ past its matching close: ( ) or { }, with quotes (single quotes in
    // ( ) only, as bash reads ${...}) and escapes skipped; `unterminated` when none closes it.
    void skip_group(char open, int start_line, const std::string& unterminated) {
        const char close = open == '{' ? '}' : ')';
        int depth = 0;
        while (i_ < s_.size()) {
            const char c = s_[i_];
            if (c == '\\') {
                i_ += 2;
                continue;
            }
            if (c == '\'' && open == '(') {
                (void)single_quoted();
                continue;
            }
            if (c == '"') {
                (void)double_quoted();
                continue;
            }
            if (c == '\n') ++line_;
            if (c == open) ++depth;
            if (c == close && --depth == 0) {
                ++i_;
                return;
            }
            ++i_;
        }
        fail(start_line, unterminated);
    }

    // $NAME, ${...}, $(...), $((...)), `...`, copied with their nesting.
    std::string dollar() {
        const std::size_t start = i_;
        const int start_line = line_;
        const Nest nest(*this, start_line);
        if (s_[i_] == '`') {
            ++i_;
            while (i_ < s_.size() && s_[i_] != '`') {
                if (s_[i_] == '\\') ++i_;
                else if (s_[i_] == '\n') ++line_;
                ++i_;
            }
            if (i_ >= s_.size()) fail(start_line, "unterminated ` command substitution");
            ++i_;
            return s_.substr(start, i_ - start);
        }
        const char n = next();
        if (n == '{' || n == '(') {
            ++i_;
            skip_group(n, start_line, std::string("unterminated $") + n);
            return s_.substr(start, i_ - start);
        }
        if (is_name_char(n)) {
            i_ += 2;
            if (std::isdigit(static_cast<unsigned char>(n)) == 0) {
                while (i_ < s_.size() && is_name_char(s_[i_])) ++i_;
            }
            return s_.substr(start, i_ - start);
        }
        if (n == '@' || n == '*' || n == '#' || n == '?' || n == '$' || n == '!' || n == '-') {
            i_ += 2;
            return s_.substr(start, 2);
        }
        ++i_;
        return "\\$";  // a lone '$' is literal
    }

    void count_lines(std::size_t from, std::size_t to) {
        for (std::size_t k = from; k < to; ++k) {
            if (s_[k] == '\n') ++line_;
        }
    }

    struct Pending {
        std::string delim;
        bool strip_tabs;
        int line;
        std::size_t token;  // the target token, which receives the body
    };

    const std::string& s_;
    const std::string& file_;
    bool internal_;
    std::size_t i_ = 0;
    int line_ = 1;
    int depth_ = 0;
    bool dbracket_ = false;
    bool regex_next_ = false;    // the next word is the regex of =~
    bool command_start_ = true;  // a command may start here: `((` is arithmetic
    bool after_for_ = false;     // the last word was `for`: `((` is an arithmetic loop
    std::vector<Pending> pending_;
    Lexed out_;
};

// ---- parser -----------------------------------------------------------------------------

class Parser {
public:
    Parser(const std::vector<Token>& t, const std::string& file) : t_(t), file_(file) {}

    NodePtr run() {
        NodePtr list = parse_list({});
        if (peek().kind != Token::End) fail(peek().line, "unexpected '" + shown(peek()) + "'");
        return list;
    }

private:
    const Token& peek() const { return t_[k_]; }
    const Token& take() { return t_[k_ < t_.size() - 1 ? k_++ : k_]; }
    [[noreturn]] void fail(int line, const std::string& message) const {
        throw InputError(file_, "line " + std::to_string(line), message);
    }
    static std::string shown(const Token& t) { return t.text == "\n" ? "end of line" : t.text; }
    bool is_op(const std::string& o) const { return peek().kind == Token::Op && peek().text == o; }
    bool is_word(const std::string& w) const { return peek().kind == Token::Word && peek().text == w; }
    void linebreaks() {
        while (is_op("\n")) take();
    }
    void expect_word(const std::string& w, int opened) {
        linebreaks();
        if (!is_word(w)) {
            fail(peek().kind == Token::End ? opened : peek().line,
                 "expected '" + w + "'" + (peek().kind == Token::End ? " before the end of the file"
                                                                      : ", found '" + shown(peek()) + "'"));
        }
        take();
    }

    NodePtr parse_list(const std::vector<std::string>& stops) {
        auto list = std::make_unique<Node>();
        list->kind = Node::List;
        list->line = peek().line;
        bool same_line = false;
        while (true) {
            if (is_op("\n")) same_line = false;
            linebreaks();
            const Token& t = peek();
            if (t.kind == Token::End || is_op(")") || is_op(";;")) break;
            bool stop = false;
            for (const auto& s : stops) stop = stop || is_word(s);
            if (stop) break;
            // bash: `;` and `&` end a command; one without a command before it (`& ;`,
            // `then ;`) is a syntax error, and bash runs nothing of the file.
            if (is_op(";") || is_op("&")) fail(t.line, "syntax error near unexpected token '" + t.text + "'");
            list->kids.push_back(parse_and_or());
            list->kids.back()->continues_line = same_line;
            if (is_op("&")) list->kids.back()->background = true;
            same_line = is_op("&") || is_op(";");
            if (same_line) take();
        }
        return list;
    }

    NodePtr parse_and_or() {
        auto node = std::make_unique<Node>();
        node->kind = Node::AndOr;
        node->line = peek().line;
        node->kids.push_back(parse_pipeline());
        while (is_op("&&") || is_op("||")) {
            node->ops.push_back(take().text);
            linebreaks();
            node->kids.push_back(parse_pipeline());
        }
        return node;
    }

    NodePtr parse_pipeline() {
        auto node = std::make_unique<Node>();
        node->kind = Node::Pipeline;
        node->line = peek().line;
        if (is_word("!")) {
            take();
            node->negate = true;
        }
        node->kids.push_back(parse_command());
        while (is_op("|") || is_op("|&")) {
            take();
            linebreaks();
            node->kids.push_back(parse_command());
        }
        return node;
    }

    void redirections() {
        while (peek().kind == Token::Redirect) {
            const Token r = take();
            if (r.text == ">&" || r.text == "<&" || r.text.find_first_of("<>") != std::string::npos) {
                if (peek().kind != Token::Word) fail(r.line, "the redirection '" + r.text + "' has no target");
                take();
            }
        }
    }

    NodePtr parse_command() {
        const Token& t = peek();
        const int line = t.line;
        if (++depth_ > kMaxNesting) fail(line, "commands nested more than " + std::to_string(kMaxNesting) + " deep");
        struct Leave {
            int& d;
            ~Leave() { --d; }
        } leave{depth_};
        NodePtr node;
        if (t.kind == Token::Arith) {
            node = std::make_unique<Node>();
            node->kind = Node::Arith;
            node->line = line;
            node->arith.push_back(take().text);
        } else if (t.kind == Token::Word && t.text == "if") {
            node = parse_if();
        } else if (t.kind == Token::Word && t.text == "for") {
            node = parse_for();
        } else if (t.kind == Token::Word && (t.text == "while" || t.text == "until")) {
            take();
            node = std::make_unique<Node>();
            node->kind = Node::While;
            node->line = line;
            node->kids.push_back(parse_list({"do"}));
            expect_word("do", line);
            node->kids.push_back(parse_list({"done"}));
            expect_word("done", line);
        } else if (t.kind == Token::Word && t.text == "case") {
            node = parse_case();
        } else if (t.kind == Token::Op && t.text == "(") {
            take();
            node = std::make_unique<Node>();
            node->kind = Node::Subshell;
            node->line = line;
            node->kids.push_back(parse_list({}));
            if (!is_op(")")) fail(line, "the ( is not closed");
            take();
        } else if (t.kind == Token::Word && t.text == "{") {
            take();
            node = std::make_unique<Node>();
            node->kind = Node::Group;
            node->line = line;
            node->kids.push_back(parse_list({"}"}));
            expect_word("}", line);
        } else if (t.kind == Token::Word && t.text == "function") {
            take();
            node = std::make_unique<Node>();
            node->kind = Node::Function;
            node->line = line;
            node->name = take().text;
            if (is_op("(")) {
                take();
                if (!is_op(")")) fail(line, "expected ')' after 'function " + node->name + " ('");
                take();
            }
            linebreaks();
            node->kids.push_back(parse_command());
            return node;
        } else if (t.kind == Token::Word && k_ + 2 < t_.size() && t_[k_ + 1].kind == Token::Op &&
                   t_[k_ + 1].text == "(" && t_[k_ + 2].kind == Token::Op && t_[k_ + 2].text == ")") {
            node = std::make_unique<Node>();
            node->kind = Node::Function;
            node->line = line;
            node->name = take().text;
            take();
            take();
            linebreaks();
            node->kids.push_back(parse_command());
            return node;
        } else {
            for (const char* reserved : {"then", "elif", "else", "fi", "do", "done", "esac", "}", "in"}) {
                if (t.kind == Token::Word && t.text == reserved) {
                    fail(line, std::string("'") + reserved + "' without the statement that opens it");
                }
            }
            return parse_simple();
        }
        redirections();
        return node;
    }

    NodePtr parse_simple() {
        auto node = std::make_unique<Node>();
        node->kind = Node::Simple;
        node->line = peek().line;
        while (true) {
            if (peek().kind == Token::Word || peek().kind == Token::Array) {
                node->words.push_back(take());
            } else if (peek().kind == Token::Redirect) {
                if (k_ + 1 < t_.size() && t_[k_ + 1].heredoc) {
                    node->has_heredoc = true;
                    node->heredoc_quoted = t_[k_ + 1].heredoc_quoted;
                    node->heredoc_body = t_[k_ + 1].heredoc_body;
                }
                redirections();
            } else {
                break;
            }
        }
        if (node->words.empty()) fail(node->line, "expected a command, found '" + shown(peek()) + "'");
        return node;
    }

    std::string source_of(std::size_t from, std::size_t to) const {
        std::string s;
        for (std::size_t k = from; k < to && k < t_.size(); ++k) {
            if (t_[k].kind == Token::Op && (t_[k].text == "\n" || t_[k].text == ";")) continue;
            if (!s.empty()) s += ' ';
            s += t_[k].text;
        }
        return s;
    }

    NodePtr parse_if() {
        auto node = std::make_unique<Node>();
        node->kind = Node::If;
        node->line = take().line;  // if
        while (true) {
            const std::size_t from = k_;
            NodePtr cond = parse_list({"then"});
            cond->source = source_of(from, k_);
            expect_word("then", node->line);
            node->kids.push_back(std::move(cond));
            node->kids.push_back(parse_list({"elif", "else", "fi"}));
            linebreaks();
            if (is_word("elif")) {
                take();
                continue;
            }
            if (is_word("else")) {
                take();
                node->kids.push_back(parse_list({"fi"}));
                node->has_else = true;
            }
            expect_word("fi", node->line);
            return node;
        }
    }

    NodePtr parse_for() {
        auto node = std::make_unique<Node>();
        node->kind = Node::For;
        node->line = take().line;
        if (peek().kind == Token::Arith) return parse_arith_for(std::move(node));
        if (is_op("(")) fail(node->line, "expected '((' after 'for'");
        if (peek().kind != Token::Word) fail(node->line, "expected the loop variable after 'for'");
        node->name = take().text;
        linebreaks();
        if (is_word("in")) {
            take();
            node->has_in = true;
            while (peek().kind == Token::Word) node->words.push_back(take());
        }
        while (is_op(";") || is_op("\n")) take();
        expect_word("do", node->line);
        node->kids.push_back(parse_list({"done"}));
        expect_word("done", node->line);
        return node;
    }

    // for (( init; test; step )) [;] do ... done
    NodePtr parse_arith_for(NodePtr node) {
        node->kind = Node::ArithFor;
        const std::string body = take().text;
        int depth = 0;
        std::string part;
        for (const char c : body) {
            if (c == '(') ++depth;
            if (c == ')') --depth;
            if (c == ';' && depth == 0) {
                node->arith.push_back(part);
                part.clear();
                continue;
            }
            part += c;
        }
        node->arith.push_back(part);
        if (node->arith.size() != 3) fail(node->line, "expected 'for (( init; test; step ))'");
        while (is_op(";") || is_op("\n")) take();
        expect_word("do", node->line);
        node->kids.push_back(parse_list({"done"}));
        expect_word("done", node->line);
        return node;
    }

    NodePtr parse_case() {
        auto node = std::make_unique<Node>();
        node->kind = Node::Case;
        node->line = take().line;
        if (peek().kind != Token::Word) fail(node->line, "expected a word after 'case'");
        node->name = take().text;
        linebreaks();
        expect_word("in", node->line);
        while (true) {
            linebreaks();
            if (is_word("esac")) {
                take();
                return node;
            }
            if (is_op("(")) take();
            std::vector<std::string> pats;
            while (peek().kind == Token::Word) {
                pats.push_back(take().text);
                if (is_op("|")) take();
            }
            if (!is_op(")")) fail(peek().line, "expected ')' after a case pattern");
            take();
            node->patterns.push_back(pats);
            node->kids.push_back(parse_list({"esac"}));
            if (is_op(";;")) take();
            else if (!is_word("esac")) fail(peek().line, "expected ';;' or 'esac'");
        }
    }

    const std::vector<Token>& t_;
    const std::string& file_;
    std::size_t k_ = 0;
    int depth_ = 0;
};

}  // namespace

Lexed lex_shell(const std::string& text, const std::string& file, bool internal) {
    return Lexer(text, file, internal).run();
}

NodePtr parse_shell(const Lexed& lexed, const std::string& file) {
    return Parser(lexed.tokens, file).run();
}

}  // namespace meshwork::shell
