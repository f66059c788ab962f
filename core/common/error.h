// Errors raised at library boundaries. The CLI maps them to exit codes (CLI.md):
// InputError -> 2 (bad input: names the file and the field), RuntimeError -> 1.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace meshwork {

// One problem in an input: where (file, field path such as "parallel.tp") and the rule.
struct InputIssue {
    std::string file;   // path of the file, or "<flags>" for command-line flags
    std::string field;  // JSON-pointer-like dotted path, e.g. "training.global_batch_size"
    std::string message;

    // "FILE: FIELD: MESSAGE", the single line the CLI prints.
    [[nodiscard]] std::string to_string() const;
};

// Bad input: malformed file, wrong type, impossible layout. Carries one or more issues.
class InputError : public std::runtime_error {
public:
    explicit InputError(InputIssue issue);
    explicit InputError(std::vector<InputIssue> issues);
    InputError(std::string file, std::string field, std::string message);

    [[nodiscard]] const std::vector<InputIssue>& issues() const { return issues_; }

private:
    std::vector<InputIssue> issues_;
};

// A failure while doing the work (I/O, a rank that died, a backend error).
class RuntimeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Writes "error: MESSAGE" and a newline to stderr in one write. std::cerr is unbuffered, so
// `<< "error: " << message` would be two writes, and under mpirun another process's output
// can land between them (the line a user, or a test, looks for is then split).
void print_error_line(const std::string& message);

}  // namespace meshwork
