// Streams the elements of a large top-level JSON array ("traceEvents") one at a time through
// nlohmann's SAX interface, so a trace of millions of events never exists as one DOM, and
// refuses nesting deeper than kMaxJsonDepth before it can exhaust the stack.
#pragma once

#include <functional>
#include <string>

#include "common/json_reader.h"

namespace meshwork::profiler {

// Calls on_element(index, value) for each element of top[array_key]; returns the other
// top-level members as a DOM. InputError naming `file` for malformed JSON, too deep nesting,
// a top level that is not an object, or a missing array.
Json stream_json_array(const std::string& text, const std::string& file, const std::string& array_key,
                       const std::function<void(std::size_t, const Json&)>& on_element);

}  // namespace meshwork::profiler
