// What a file handed to the window whole is (dropped on it, or several traces named at
// once): a layout to open or a trace to show. A trace's format itself is the profiler's to
// tell (profiler::detect_input_format); this only separates the layout JSON from a Kineto
// JSON, which both begin with '{'.
#pragma once

#include <QString>
#include <QStringList>

namespace meshwork::gui {

enum class DroppedFile { Layout, Trace };

// A JSON file (plain, not gzip) of at most kLayoutMaxBytes whose top-level object has no
// "traceEvents" (the Trace Event Format's key, which Kineto writes) is a layout; a JSON array
// (the Trace Event Format's array form), a larger JSON, a gzip, an SQLite file and anything
// else is a trace (the trace opener says in words what is wrong with one that is not).
[[nodiscard]] DroppedFile classify_dropped_file(const QString& path);

// Bundled layouts are a few kB; a profile of one step is megabytes.
inline constexpr qint64 kLayoutMaxBytes = 4 << 20;

// The layouts and the traces among `paths`, in the given order.
struct DroppedFiles {
    QStringList layouts;
    QStringList traces;
};
[[nodiscard]] DroppedFiles sort_dropped_files(const QStringList& paths);

}  // namespace meshwork::gui
