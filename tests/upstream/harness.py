"""What the upstream checks share: running meshwork-cli, extracting a pinned upstream tree,
running one case in a forked process, and printing the results."""
import os
import pickle
import subprocess


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def run_cli(cli, args, what):
    """Runs meshwork-cli; a non-zero exit raises RuntimeError naming `what` (the verb and
    format) with the exit code and the CLI's message."""
    r = run([cli, *args])
    if r.returncode != 0:
        raise RuntimeError(f"meshwork-cli {what}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def source_tree(source, commit, workdir, marker, paths):
    """SOURCE itself when it is a source tree (has MARKER), else COMMIT's PATHS extracted from
    the git directory SOURCE into WORKDIR. Returns (tree, commit or None) or (None, why)."""
    if os.path.isdir(os.path.join(source, marker)):
        return source, None
    if not os.path.exists(os.path.join(source, "HEAD")):
        return None, f"{source} is neither a source tree ({marker}) nor a git directory"
    if run(["git", f"--git-dir={source}", "cat-file", "-e", commit + "^{commit}"]).returncode != 0:
        return None, f"{source} does not have the pinned commit {commit}"
    tree = os.path.join(workdir, "upstream-src")
    os.makedirs(tree)
    archive = subprocess.Popen(["git", f"--git-dir={source}", "archive", commit, *paths], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", tree], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        return None, f"git archive {commit} failed in {source}"
    return tree, commit


def run_forked(fn, *a):
    """FN(*A) in a child process forked after the upstream imports, so that no case sees
    another's module state; its stdout/stderr (upstream's prints and warnings) are dropped.
    Returns FN's dict, or {"harness": "FAIL: ..."}."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            log = os.open(os.devnull, os.O_WRONLY)
            os.dup2(log, 1)
            os.dup2(log, 2)
            out = fn(*a)
        except BaseException as e:
            out = {"harness": f"FAIL: {type(e).__name__}: {e}"}
        with os.fdopen(w, "wb") as f:
            pickle.dump(out, f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    return pickle.loads(data) if data else {"harness": "FAIL: the check process died"}


def report(label, row, checks):
    """Prints one line per check of ROW; returns (passed, failed)."""
    passed = failed = 0
    for check in checks:
        if check not in row:
            continue
        ok = not str(row[check]).startswith("FAIL")
        passed += ok
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {label} {check}: {row[check]}")
    if "harness" in row:
        failed += 1
        print(f"FAIL {label} harness: {row['harness']}")
    return passed, failed


def print_table(rows, checks, extra=None):
    """A Markdown table: one row per case, pass/FAIL (or the cell's word) per check; the
    last of CHECKS ("placeholders") is folded into the cell before it; EXTRA a last column."""
    shown = checks[:-1]
    print("| case | " + " | ".join(shown) + (f" | {extra} |" if extra else " |"))
    print("|---" * (len(shown) + 1 + bool(extra)) + "|")
    for row in rows:
        cells = []
        for check in shown:
            v = str(row.get(check, "-"))
            cells.append("pass" if v.startswith("pass") else ("FAIL" if v.startswith("FAIL") else v))
        if str(row.get(checks[-1], "")).startswith("FAIL"):
            cells[-1] += " (placeholder used)"
        print(f"| {row['case']} | " + " | ".join(cells) + (f" | {row.get(extra, '-')} |" if extra else " |"))


def reimport(cli, text, filename, workdir, import_args, export_args):
    """An export read back as a user would: TEXT written to WORKDIR/FILENAME, `import-args` on
    it (IMPORT_ARGS: what the file cannot carry, such as --gpus), and the imported layout
    exported again with EXPORT_ARGS (the format). Returns (re-export text, lost[], the
    import's JSON); a refused import or export raises RuntimeError naming the step."""
    import json
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, filename)
    with open(path, "w") as f:
        f.write(text)
    layout = path + ".layout.json"
    imported = json.loads(run_cli(cli, ["import-args", path, "--json", "--out", layout, *import_args],
                                  "import-args of the export").stdout)
    again = json.loads(run_cli(cli, ["export", layout, "--allow-lossy", "--json", *export_args],
                               "export of the re-imported layout").stdout)
    return again["content"], again.get("lost", []), imported


def changed_lines(first, second, comment="#"):
    """The lines that differ between two exports (a unified diff without context), or [].
    Comment lines (they name the layout and the file it came from) and the description a
    re-import writes ("Imported from FILE") are left out: the layout's name is not a setting."""
    import difflib

    def settings(text):
        return [l for l in text.splitlines()
                if not l.lstrip().startswith(comment) and not l.lstrip().startswith(("description", '"description"'))]
    return [l for l in difflib.unified_diff(settings(first), settings(second), lineterm="", n=0)
            if l[:1] in "+-" and not l.startswith(("+++", "---"))]
