#!/usr/bin/env bash
# Regenerates the binary files of this corpus (SQLite files, a gzip file) from a closed
# Meshwork trace (for instance the complete.mwtrace that build-fuzz/tests/fuzz/make_trace_seeds writes) and the seed Nsight
# Systems export tests/fuzz/nsys_seed.sql. Needs the sqlite3 shell.
#
#   tests/data/bad/make_binary_cases.sh TRACE
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 CLOSED_MESHWORK_TRACE" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
trace=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A small copy (1 KiB pages) to derive the cases from.
sqlite3 "$trace" "VACUUM INTO '$tmp/base.sqlite'"
sqlite3 "$tmp/base.sqlite" "PRAGMA page_size = 1024; VACUUM;"
variant() { cp "$tmp/base.sqlite" "$here/$1"; sqlite3 "$here/$1" "$2"; }

# Written by a newer Meshwork: the format version is from the future.
variant trace-future-format-version.sqlite \
  "UPDATE meta SET value = '999' WHERE key = 'format_version';"
# A third party added a trigger and a view (neither is ever run: the reader turns both off).
variant trace-third-party-trigger.sqlite \
  "CREATE VIEW busy AS SELECT count(*) FROM events;
   CREATE TRIGGER wipe AFTER INSERT ON counters BEGIN DELETE FROM events; END;"
# A view put in the place of the events table.
variant trace-view-instead-of-events.sqlite \
  "ALTER TABLE events RENAME TO events_real;
   CREATE VIEW events AS SELECT * FROM events_real WHERE kind = 0;"
# Names that are not UTF-8 (an overlong '/', a lone continuation byte, 0xFF, a surrogate).
variant trace-utf8-garbage-names.sqlite \
  "UPDATE strings SET value = CAST(X'626c6f636bc0af80ffeda080' AS TEXT) WHERE id = 1;"
# Sizes declared far beyond what the file holds, consistently: 2^31 events in meta and in
# one track, which spans to the end of time.
variant trace-2gib-declared-counts.sqlite \
  "UPDATE meta SET value = '2147483648' WHERE key = 'event_count';
   UPDATE tracks SET event_count = 0;
   UPDATE tracks SET event_count = 2147483648, end_ns = 9223372036854775807
     WHERE id = (SELECT min(id) FROM tracks);"

# Corrupt pages behind a valid header: the header and the schema are intact, every page of
# one table (dbstat lists them) is overwritten with text, so the schema reads and the first
# query that reaches that table fails.
corrupt_table() {
  local file=$1 table=$2 page
  for page in $(sqlite3 "$file" "SELECT pageno FROM dbstat WHERE name = '$table'"); do
    printf 'not a b-tree page %.0s' $(seq 60) | head -c 1024 |
      dd of="$file" bs=1024 seek=$((page - 1)) conv=notrunc status=none
  done
}
cp "$tmp/base.sqlite" "$here/trace-corrupt-pages.sqlite"
corrupt_table "$here/trace-corrupt-pages.sqlite" events

sqlite3 "$tmp/nsys.sqlite" < "$root/tests/fuzz/nsys_seed.sql"
sqlite3 "$tmp/nsys.sqlite" "PRAGMA page_size = 1024; VACUUM;"
cp "$tmp/nsys.sqlite" "$here/nsys-corrupt-pages.sqlite"
corrupt_table "$here/nsys-corrupt-pages.sqlite" CUPTI_ACTIVITY_KIND_KERNEL
# Kernel names that are not UTF-8.
cp "$tmp/nsys.sqlite" "$here/nsys-utf8-garbage-names.sqlite"
sqlite3 "$here/nsys-utf8-garbage-names.sqlite" \
  "UPDATE StringIds SET value = CAST(X'67656d6dc0afff' AS TEXT) WHERE id = 2;"
# The header of an SQLite file and nothing else.
head -c 100 "$tmp/nsys.sqlite" > "$here/sqlite-header-only.sqlite"
# A gzip-compressed Kineto trace whose trailer declares 2 GiB of content (ISIZE = 2^31) for
# a valid 2.5 KB trace: the reader must trust the bytes it inflates, not the declared size.
gzip -9 -n -c "$root/tests/fixtures/profiler/kineto_rank1.json" > "$here/kineto-2gib-declared.json.gz"
size=$(stat -c %s "$here/kineto-2gib-declared.json.gz")
printf '\x00\x00\x00\x80' | dd of="$here/kineto-2gib-declared.json.gz" bs=1 seek=$((size - 4)) conv=notrunc status=none
ls -l "$here"/*.sqlite "$here"/*.gz
