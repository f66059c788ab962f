#include "profiler/analysis/kernel_name.h"

#include <algorithm>
#include <cctype>

namespace meshwork::profiler {

namespace {

constexpr std::string_view kAnonymous = "(anonymous namespace)";
constexpr auto npos = std::string_view::npos;

bool starts_anonymous(std::string_view s, std::size_t i) { return s.compare(i, kAnonymous.size(), kAnonymous) == 0; }

bool opens(char c) { return c == '<' || c == '(' || c == '{' || c == '['; }
bool closes(char c) { return c == '>' || c == ')' || c == '}' || c == ']'; }

// Index just past the bracket group that opens at s[i], brackets of every kind nested
// inside counted; s.size() when it is never closed (a name cut short by its producer).
std::size_t skip_group(std::string_view s, std::size_t i) {
    int depth = 0;
    for (; i < s.size(); ++i) {
        if (opens(s[i])) {
            ++depth;
        } else if (closes(s[i]) && --depth == 0) {
            return i + 1;
        }
    }
    return s.size();
}

bool is_tag_text(std::string_view t) {
    return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
}

}  // namespace

bool KernelName::in_scope(std::string_view scope) const {
    return std::find(scopes.begin(), scopes.end(), scope) != scopes.end();
}

KernelName parse_kernel_name(std::string_view s) {
    // The top level of the name (template arguments skipped) up to its argument list: the
    // qualified name is its last word (before it: the return type, `unsigned int`, `void`).
    std::vector<std::string_view> parts;
    std::size_t seg_start = npos, seg_end = npos;
    auto close_segment = [&] {
        if (seg_start != npos) parts.push_back(s.substr(seg_start, seg_end - seg_start));
        seg_start = npos;
    };
    std::size_t i = 0;
    while (i < s.size()) {
        const char c = s[i];
        if (c == '(' && starts_anonymous(s, i)) {
            if (seg_start == npos) seg_start = i;
            i += kAnonymous.size();
            seg_end = i;
        } else if (c == '(' || c == '[') {
            break;  // the argument list; " [clone .kd]"; a collective tag
        } else if (c == '<') {
            i = skip_group(s, i);  // template arguments: not the identifier (seg_end stays)
        } else if (c == '{') {
            if (seg_start == npos) seg_start = i;  // {lambda(int)#1}
            i = skip_group(s, i);
            seg_end = i;
        } else if (c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
            close_segment();
            i += 2;
        } else if (c == ' ' || c == '*' || c == '&') {
            std::size_t j = i;
            while (j < s.size() && (s[j] == ' ' || s[j] == '*' || s[j] == '&')) ++j;
            if (j >= s.size() || s[j] == '[' || (s[j] == '(' && !starts_anonymous(s, j))) break;
            close_segment();
            parts.clear();  // what came before was the return type
            i = j;
        } else {
            if (seg_start == npos) seg_start = i;
            seg_end = ++i;
        }
    }
    close_segment();
    KernelName out;
    if (parts.empty()) {
        out.function = s;
        return out;
    }
    out.function = parts.back();
    parts.pop_back();
    out.scopes = std::move(parts);
    return out;
}

std::string abbreviate_kernel_name(std::string_view name, std::size_t max_chars) {
    if (name.size() <= max_chars) return std::string(name);
    const std::string_view tag_text = collective_tag(name);
    const std::string_view body = without_collective_tag(name);
    const std::string tag = tag_text.empty() ? std::string() : " [" + std::string(tag_text) + "]";
    std::string out;
    for (std::size_t i = 0; i < body.size();) {
        const char c = body[i];
        if (c == '(' && starts_anonymous(body, i)) {
            out.append(kAnonymous);
            i += kAnonymous.size();
        } else if (c == '<' || c == '(') {
            out.append(c == '<' ? "<...>" : "(...)");
            i = skip_group(body, i);
        } else {
            out.push_back(c);
            ++i;
        }
    }
    const std::size_t room = max_chars > tag.size() + 3 ? max_chars - tag.size() - 3 : 0;
    if (out.size() + tag.size() > max_chars) out = out.substr(0, room) + "...";
    return out + tag;
}

std::string with_collective_tag(std::string_view name, std::string_view collective) {
    return std::string(without_collective_tag(name)) + " [" + std::string(collective) + "]";
}

std::string_view collective_tag(std::string_view name) {
    if (name.empty() || name.back() != ']') return {};
    const auto open = name.rfind(" [");
    if (open == npos) return {};
    const std::string_view inner = name.substr(open + 2, name.size() - open - 3);
    return is_tag_text(inner) ? inner : std::string_view{};
}

std::string_view without_collective_tag(std::string_view name) {
    const std::string_view tag = collective_tag(name);
    return tag.empty() ? name : name.substr(0, name.size() - tag.size() - 3);
}

}  // namespace meshwork::profiler
