// Text from an input file on its way to a terminal (an error, a note): control characters
// written as \xNN, so that a script or config cannot send escape sequences (ESC ] 0; retitles
// the terminal, ESC [ 2J clears it) through a message that quotes it. Newlines and tabs are
// kept: messages use them for layout. C1 controls (U+0080..U+009F, which some terminals read
// as ESC + a letter) are written as \u00NN. Other bytes are kept (inputs are checked UTF-8).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace meshwork {

inline std::string printable_text(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        char buf[8];
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(s[i + 1]));
            out += buf;
            ++i;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

}  // namespace meshwork
