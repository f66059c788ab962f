// Where imported and fetched traces are kept: the user's cache folder
// (QStandardPaths::CacheLocation, e.g. ~/.cache/Meshwork/Meshwork/traces), so that opening
// the same nsys export or remote file again does not redo the work.
#pragma once

#include <QString>
#include <QStringList>

namespace meshwork::gui {

// The folder `sub` ("imports", "remote") under the trace cache, created when missing;
// empty when it cannot be created.
QString trace_cache_dir(const QString& sub);
// The Meshwork trace an import of `input` writes: named after the input, with a key of its
// absolute path, size and modification time (a changed input is imported again). Both
// paths are empty when the cache folder cannot be created.
QString import_cache_path(const QString& input);
// The same for several files merged as the ranks of one trace: keyed by every input.
QString import_cache_path(const QStringList& inputs);
// The local copy of `host:remote_path`: one folder per host, the path's characters that
// are not safe in a file name replaced.
QString remote_cache_path(const QString& host, const QString& remote_path);

}  // namespace meshwork::gui
