#!/usr/bin/env python3
"""Lists the command-line flags of Megatron-LM's pretrain argparse at the pinned commit and
at every core release since core_v0.12.0, without importing Megatron-LM (no torch needed):
the literal add_argument('--x') calls of megatron/training/arguments.py and of the extra
arguments providers: megatron/post_training/arguments.py (examples/gptoss/02_train.sh passes
its flags to pretrain_gpt.py), the training entry points, and every other script of tools/
and examples/ that passes an extra_args_provider (text generation, inference, conversion), and the flags ArgumentGroupFactory derives from the config
dataclasses (megatron/training/argument_utils.py: `--field-name`; a bool defaulting to True
gives `--no-field-name` and `--disable-field-name`; argparse_meta arg_names win).

Writes core/export/megatron_upstream_flags.inc: one {"--flag", takes_value, "where"} per
flag, `where` being "file:line" at the pinned commit, or "RELEASE file:line" for a flag that
only earlier releases define (the newest release that has it). Usage (from the worktree,
with a bare clone from the `fetch` tool):

    tests/upstream/megatron_argparse_flags.py /work/.mirror/NVIDIA+Megatron-LM/repo > core/export/megatron_upstream_flags.inc
"""
import ast
import subprocess
import sys

REPO = sys.argv[1]
COMMIT = subprocess.check_output(["git", "--git-dir", REPO, "rev-parse", "HEAD"], text=True).strip()
ARGS = "megatron/training/arguments.py"
# The extra arguments providers: post-training's (pretrain_gpt.py's), the training entry
# points' own (pretrain_*.py) and the examples' training and fine-tuning scripts.
FIXED_PROVIDERS = [ARGS, "megatron/post_training/arguments.py"]


def providers():
    out = subprocess.check_output(["git", "--git-dir", REPO, "ls-tree", "-r", "--name-only", REV], text=True)
    extra = []
    other = []
    for f in out.split():
        name = f.rsplit("/", 1)[-1]
        if not f.endswith(".py"):
            continue
        if ("/" not in f and name.startswith("pretrain_")) or \
                (f.startswith("examples/") and (name.startswith(("pretrain", "finetune", "train")))):
            extra.append(f)
        elif f.startswith(("examples/", "tools/")):
            # Every other entry point that hands Megatron-LM's argparse a provider of its own:
            # text generation (tools/run_text_generation_server.py, the examples' generate*.py,
            # --out-seq-length, --temperature), inference and conversion tools. Their launch
            # scripts carry the model's and the layout's flags too; after the training
            # providers, so a flag keeps the training provider's citation.
            text = show(f)
            # ... and the argument modules such providers import (examples/multimodal/
            # multimodal_args.py: --vision-model-type, --img-h, --use-te for run_text_generation.py
            # and train.py).
            if text is not None and ("extra_args_provider" in text or name.endswith("args.py")):
                other.append(f)
    return FIXED_PROVIDERS + sorted(extra) + sorted(other)
# Newest first: a flag is cited where the newest of them defines it.
RELEASES = ["HEAD", "core_v0.19.0", "core_v0.18.0", "core_v0.17.0", "core_v0.16.0", "core_v0.15.0",
            "core_v0.14.0", "core_v0.13.0", "core_v0.12.0"]
REV = "HEAD"


_BATCH = subprocess.Popen(["git", "--git-dir", REPO, "cat-file", "--batch"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE)


def show(path):
    """The file at REV, or None (one `git cat-file --batch` process for every read)."""
    _BATCH.stdin.write(f"{REV}:{path}\n".encode())
    _BATCH.stdin.flush()
    header = _BATCH.stdout.readline().decode().split()
    if len(header) < 3 or header[1] != "blob":
        return None
    data = _BATCH.stdout.read(int(header[2]))
    _BATCH.stdout.read(1)
    return data.decode("utf-8", errors="replace")


def files():
    out = subprocess.check_output(["git", "--git-dir", REPO, "ls-tree", "-r", "--name-only", REV, "megatron"],
                                  text=True)
    return [f for f in out.split() if f.endswith(".py")]


flags = {}  # name -> (takes_value, where)


def add(name, takes_value, where):
    if name.startswith("--") and name not in flags:
        flags[name] = (takes_value, where if REV == "HEAD" else f"{REV} {where}")


def const_str(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def scan():
    factories = []
    calls = []
    for provider in providers():
        text = show(provider)
        if text is None:
            continue
        try:
            ptree = ast.parse(text)
        except SyntaxError:  # an example that does not parse (a typo upstream) defines nothing
            continue
        if provider == ARGS:
            tree = ptree
        calls += [(provider, n) for n in ast.walk(ptree) if isinstance(n, ast.Call)]
    for provider, node in calls:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "add_argument":
            names = [const_str(a) for a in node.args if const_str(a)]
            action = next((const_str(k.value) for k in node.keywords if k.arg == "action"), None)
            takes = action not in ("store_true", "store_false", "count")
            for n in names:
                add(n, takes, f"{provider}:{node.lineno}")
        if isinstance(f, ast.Name) and f.id == "ArgumentGroupFactory" and node.args and provider == ARGS:
            cls = node.args[0].id if isinstance(node.args[0], ast.Name) else None
            exclude = []
            for k in node.keywords:
                if k.arg == "exclude":
                    if isinstance(k.value, ast.List):
                        exclude = [const_str(e) for e in k.value.elts]
                    elif isinstance(k.value, ast.Name):
                        # exclude = [...]: the nearest assignment before the call
                        best = None
                        for a in ast.walk(tree):
                            if isinstance(a, ast.Assign) and any(isinstance(t, ast.Name) and t.id == k.value.id for t in a.targets) \
                                    and isinstance(a.value, ast.List) and a.lineno < node.lineno:
                                if best is None or a.lineno > best.lineno:
                                    best = a
                        if best is not None:
                            exclude = [const_str(e) for e in best.value.elts]
            factories.append((cls, set(exclude)))

    # Dataclass definitions anywhere under megatron/.
    classes = {}
    for path in files():
        try:
            t = ast.parse(show(path))
        except SyntaxError:
            continue
        for node in t.body:
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, (path, node))


    def fields_of(name, classes):
        if name not in classes:
            return []
        path, node = classes[name]
        out = []
        for base in node.bases:
            if isinstance(base, ast.Name):
                out += fields_of(base.id, classes)
        for st in node.body:
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                out.append((st.target.id, st, path))
        return out


    def arg_names_and_value(field_name, st):
        default = st.value
        meta_names = None
        init = True
        if isinstance(default, ast.Call) and getattr(default.func, "id", getattr(default.func, "attr", "")) == "field":
            for k in default.keywords:
                if k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False:
                    init = False
                if k.arg == "metadata" and isinstance(k.value, ast.Dict):
                    for mk, mv in zip(k.value.keys, k.value.values):
                        if const_str(mk) == "argparse_meta" and isinstance(mv, ast.Dict):
                            for ak, av in zip(mv.keys, mv.values):
                                if const_str(ak) == "arg_names" and isinstance(av, ast.List):
                                    meta_names = [const_str(e) for e in av.elts]
            default = next((k.value for k in default.keywords if k.arg == "default"), None)
        ann = ast.unparse(st.annotation)
        is_bool = ann in ("bool", "Optional[bool]", "bool | None")
        dash = "--" + field_name.replace("_", "-")
        if not init:
            return [], True
        if is_bool:
            if isinstance(default, ast.Constant) and default.value is True:
                names = ["--no-" + field_name.replace("_", "-"), "--disable-" + field_name.replace("_", "-")]
            else:
                names = [dash]
            return (meta_names or names), False
        return (meta_names or [dash]), True


    for cls, exclude in factories:
        for name, st, path in fields_of(cls, classes):
            if name in exclude or name.startswith("_"):
                continue
            names, takes = arg_names_and_value(name, st)
            for n in names:
                add(n, takes, f"{path}:{st.lineno}")



for REV in RELEASES:
    scan()

print(f"// Generated by tests/upstream/megatron_argparse_flags.py from NVIDIA/Megatron-LM {COMMIT}")
print(f"// and the releases {', '.join(RELEASES[1:])}: every flag of the pretrain argparse (arguments.py,")
print("// the config dataclasses that ArgumentGroupFactory turns into flags, and the extra arguments")
print("// providers: post_training/arguments.py, pretrain_*.py, the examples' training scripts, then the")
print("// generation, inference and conversion entry points of tools/ and examples/), whether it")
print("// takes a value, and where it is defined (prefixed by the newest release that has it when the")
print("// pinned commit does not). A table of names, not upstream code. Regenerate with the command in the script.")
for name in sorted(flags):
    takes, where = flags[name]
    print(f'{{"{name}", {"true" if takes else "false"}, "{where}"}},')
