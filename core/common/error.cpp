#include "core/common/error.h"

#include <iostream>

#include "core/common/printable.h"

namespace meshwork {

std::string InputIssue::to_string() const {
    std::string out = file.empty() ? std::string("<input>") : file;
    if (!field.empty()) out += ": " + field;
    out += ": " + message;
    return out;
}

namespace {
std::string join_issues(const std::vector<InputIssue>& issues) {
    std::string out;
    for (const auto& issue : issues) {
        if (!out.empty()) out += "\n";
        out += issue.to_string();
    }
    return out;
}
}  // namespace

InputError::InputError(InputIssue issue)
    : std::runtime_error(issue.to_string()), issues_{std::move(issue)} {}

InputError::InputError(std::vector<InputIssue> issues)
    : std::runtime_error(join_issues(issues)), issues_(std::move(issues)) {}

InputError::InputError(std::string file, std::string field, std::string message)
    : InputError(InputIssue{std::move(file), std::move(field), std::move(message)}) {}

void print_error_line(const std::string& message) {
    // Messages quote their inputs: their control characters are not sent to the terminal raw.
    const std::string line = "error: " + printable_text(message) + "\n";
    std::cerr.write(line.data(), static_cast<std::streamsize>(line.size()));
    std::cerr.flush();
}

}  // namespace meshwork
