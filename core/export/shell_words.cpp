#include "export/shell_words.h"

#include <cctype>

#include "common/error.h"

namespace meshwork {

namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

class Splitter {
public:
    Splitter(const std::string& text, const std::string& file) : s_(text), file_(file) {}

    std::vector<ShellCommand> run() {
        while (i_ < s_.size()) {
            const char c = s_[i_];
            if (c == '\\' && next() == '\n') {  // continuation: the two characters vanish
                i_ += 2;
                ++line_;
                continue;
            }
            if (c == '\n' || c == ';') {
                end_word();
                end_command();
                if (c == '\n') ++line_;
                ++i_;
                continue;
            }
            if (c == ' ' || c == '\t' || c == '\r') {
                end_word();
                ++i_;
                continue;
            }
            if (c == '#' && !in_word_) {  // a comment runs to the end of the line
                while (i_ < s_.size() && s_[i_] != '\n') ++i_;
                continue;
            }
            if (c == '|' || c == '&' || c == '<' || c == '>') {
                throw InputError(file_, "line " + std::to_string(line_),
                                 std::string("'") + c +
                                     "': pipes, redirections and '&&'/'||' are not part of a "
                                     "command line to import; remove them");
            }
            start_word();
            if (c == '\'') {
                single_quoted();
            } else if (c == '"') {
                double_quoted();
            } else if (c == '\\') {
                if (i_ + 1 < s_.size()) word_.text += s_[i_ + 1];
                i_ += 2;
            } else if (c == '$' || c == '`') {
                expansion();
            } else {
                if (c == '=' && !quoted_ && !word_.text.empty() && name_only_) {
                    word_.assignment = std::isdigit(static_cast<unsigned char>(word_.text[0])) == 0;
                }
                if (!is_name_char(c)) name_only_ = false;
                word_.text += c;
                ++i_;
            }
        }
        end_word();
        end_command();
        return std::move(commands_);
    }

private:
    [[nodiscard]] char next() const { return i_ + 1 < s_.size() ? s_[i_ + 1] : '\0'; }

    void start_word() {
        if (in_word_) return;
        in_word_ = true;
        quoted_ = false;
        name_only_ = true;
        word_ = ShellWord{};
        word_.line = line_;
    }
    void end_word() {
        if (!in_word_) return;
        current_.push_back(std::move(word_));
        in_word_ = false;
    }
    void end_command() {
        if (!current_.empty()) commands_.push_back(std::move(current_));
        current_.clear();
    }

    void single_quoted() {
        const int start_line = line_;
        quoted_ = true;
        name_only_ = false;
        ++i_;
        while (i_ < s_.size() && s_[i_] != '\'') {
            if (s_[i_] == '\n') ++line_;
            word_.text += s_[i_++];
        }
        if (i_ >= s_.size()) {
            throw InputError(file_, "line " + std::to_string(start_line), "unterminated ' quote");
        }
        ++i_;
    }
    void double_quoted() {
        const int start_line = line_;
        quoted_ = true;
        name_only_ = false;
        ++i_;
        while (i_ < s_.size() && s_[i_] != '"') {
            const char c = s_[i_];
            if (c == '\\' && i_ + 1 < s_.size()) {
                const char e = s_[i_ + 1];
                if (e == '\n') {
                    ++line_;
                } else if (e == '"' || e == '\\' || e == '$' || e == '`') {
                    word_.text += e;
                } else {
                    word_.text += c;
                    word_.text += e;
                }
                i_ += 2;
                continue;
            }
            if (c == '$' || c == '`') {
                expansion();
                continue;
            }
            if (c == '\n') ++line_;
            word_.text += c;
            ++i_;
        }
        if (i_ >= s_.size()) {
            throw InputError(file_, "line " + std::to_string(start_line), "unterminated \" quote");
        }
        ++i_;
    }
    // $NAME, ${...}, $(...), $((...)), `...`: kept verbatim in the word and remembered.
    void expansion() {
        const std::size_t start = i_;
        name_only_ = false;
        if (s_[i_] == '`') {
            ++i_;
            while (i_ < s_.size() && s_[i_] != '`') ++i_;
            if (i_ < s_.size()) ++i_;
        } else if (next() == '{' || next() == '(') {
            const char open = next();
            const char close = open == '{' ? '}' : ')';
            int depth = 0;
            ++i_;
            while (i_ < s_.size()) {
                if (s_[i_] == open) ++depth;
                if (s_[i_] == close && --depth == 0) {
                    ++i_;
                    break;
                }
                ++i_;
            }
        } else if (is_name_char(next()) || next() == '@' || next() == '*' || next() == '#' ||
                   next() == '?') {
            i_ += 2;
            while (i_ < s_.size() && is_name_char(s_[i_]) &&
                   std::isdigit(static_cast<unsigned char>(s_[start + 1])) == 0) {
                ++i_;
            }
        } else {
            word_.text += '$';  // a lone '$' is literal in bash
            ++i_;
            return;
        }
        const std::string text = s_.substr(start, i_ - start);
        if (word_.expansion.empty()) word_.expansion = text;
        word_.text += text;
    }

    const std::string& s_;
    const std::string& file_;
    std::size_t i_ = 0;
    int line_ = 1;
    bool in_word_ = false;
    bool quoted_ = false;     // part of the word was quoted
    bool name_only_ = true;   // the word so far is a valid variable name
    ShellWord word_;
    ShellCommand current_;
    std::vector<ShellCommand> commands_;
};

}  // namespace

std::vector<ShellCommand> split_shell_commands(const std::string& text, const std::string& file) {
    return Splitter(text, file).run();
}

}  // namespace meshwork
