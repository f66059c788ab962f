"""What lets upstream's own Python (Megatron-LM, DeepSpeed) import on the torch this machine has.

Megatron-LM (pyproject.toml: torch >= 2.6, Python >= 3.12) and DeepSpeed (torch >= 2.0,
pydantic >= 2) are written for newer stacks than Debian 12 packages (torch 1.13, Python
3.11, numpy 1.24). The checks only call argument, validation and config code, which needs
none of the newer torch; but the modules they live in import model, checkpoint and kernel
code at module level. Everything here is about getting those imports through, and each
piece is reported by the checks:

- placeholders: a name that torch 1.13 lacks (torch.distributed.checkpoint, DTensor,
  torch.library.custom_op, float8 dtypes...), a torch module that does not import under
  Python 3.11 (torch.distributed._shard), or a missing package named in EXTRA_ROOTS, is
  bound to an inert placeholder class when an upstream module (CALLERS) asks for it.
  After arm(), every use of a placeholder (looking it up, call, attribute, isinstance, ==)
  is recorded in USED; a check fails if its calls touched one.
- lazy(): a package whose __init__ imports the whole engine (DeepSpeed's) is registered
  without running its `from .x import y` lines; the rest of __init__ runs as written
  and those names resolve on first use. Statements that need a skipped module that cannot
  import on this torch are skipped and listed in SKIPPED.
- backports of language/library names added after what Debian 12 ships:
  typing.override (Python 3.12, PEP 698) from typing_extensions, and numpy.dtypes
  (NumPy 1.25), which names classes NumPy 1.24 already has as type(np.dtype(x)).

Nothing in upstream's code is changed or replaced; no function under test is stood in for.
"""
import ast
import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types

CALLERS = ("megatron",)     # upstream packages whose imports may get placeholders
EXTRA_ROOTS = ()            # missing top-level packages that get placeholders too
VERSIONS = {}               # __version__ of placeholder top-level packages
CREATED = set()             # placeholder names handed out
USED = []                   # placeholder uses after arm()
BROKEN = {}                 # torch modules that exist but fail to import here
SKIPPED = []                # lazy() statements skipped
_armed = [False]


class _Placeholder(type):
    """Metaclass of placeholders: a class, so upstream can subclass it, annotate with it,
    use it as a dict key or decorator, at import time."""

    def __getattr__(cls, attr):
        return _missing(cls.__qualname__, attr)

    def __call__(cls, *args, **kwargs):
        if _armed[0]:
            USED.append(cls.__qualname__ + "()")
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # applied as a decorator: the function stays upstream's
        return placeholder(cls.__qualname__ + "()")

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    __ror__ = __or__

    def __instancecheck__(cls, obj):
        if _armed[0]:
            USED.append(f"isinstance(_, {cls.__qualname__})")
        return False

    def __subclasscheck__(cls, sub):
        return sub is cls

    def __eq__(cls, other):
        if _armed[0]:
            USED.append(cls.__qualname__ + " ==")
        return cls is other

    def __hash__(cls):
        return id(cls)


def placeholder(name):
    CREATED.add(name)
    return _Placeholder(name.rsplit(".", 1)[-1], (), {"__qualname__": name})


def _asked_by_upstream(depth):
    frame = sys._getframe(depth)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen_importlib")):
        frame = frame.f_back
    return frame is not None and frame.f_globals.get("__name__", "").split(".")[0] in CALLERS


def _missing(module_name, attr):
    if attr.startswith("__"):
        raise AttributeError(attr)
    if _armed[0]:
        USED.append(f"{module_name}.{attr}")
    return placeholder(f"{module_name}.{attr}")


class _PlaceholderModule(importlib.abc.Loader):
    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        if spec.name in VERSIONS:
            module.__version__ = VERSIONS[spec.name]
        module.__getattr__ = lambda attr: _missing(spec.name, attr)
        return module

    def exec_module(self, module):
        CREATED.add(module.__name__)


class _ImportOrPlaceholder(importlib.abc.Loader):
    def __init__(self, real):
        self.real = real

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module):
        try:
            self.real.exec_module(module)
        except Exception as e:  # e.g. torch 1.13's _shard on Python 3.11 (mutable dataclass default)
            BROKEN[module.__name__] = f"{type(e).__name__}: {e}"
            module.__path__ = []
            module.__getattr__ = lambda attr: _missing(module.__name__, attr)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        root = name.split(".")[0]
        if not (name.startswith("torch.") or root in EXTRA_ROOTS) or not _asked_by_upstream(3):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None:
            return importlib.machinery.ModuleSpec(name, _PlaceholderModule(), is_package=True)
        spec.loader = _ImportOrPlaceholder(spec.loader)
        return spec


def install():
    """After torch has imported as itself: torch modules answer upstream's questions about
    names they lack with placeholders; torch's own code still gets AttributeError."""
    import torch  # noqa: F401
    import torch.cuda  # noqa: F401
    import torch.distributed  # noqa: F401
    import torch.nn.functional  # noqa: F401

    sys.meta_path.insert(0, _Finder())
    for name, module in list(sys.modules.items()):
        if not (name == "torch" or name.startswith("torch.")) or name.startswith("torch._C"):
            continue
        if not isinstance(module, types.ModuleType) or "__getattr__" in module.__dict__:
            continue

        def fallback(attr, _name=name):
            if attr.startswith("__") or not _asked_by_upstream(2):
                raise AttributeError(f"module {_name!r} has no attribute {attr!r}")
            if _armed[0]:
                USED.append(f"{_name}.{attr}")
            return placeholder(f"{_name}.{attr}")

        module.__getattr__ = fallback
    backport()


def backport():
    import typing

    if not hasattr(typing, "override"):
        import typing_extensions

        typing.override = typing_extensions.override
    try:
        import numpy.dtypes  # noqa: F401
    except ImportError:
        import numpy as np

        dtypes = types.ModuleType("numpy.dtypes")
        for code in np.typecodes["All"]:
            cls = type(np.dtype(code))
            setattr(dtypes, np.dtype(code).type.__name__.capitalize().replace("_", "") + "DType", cls)
        dtypes.UInt32DType = type(np.dtype(np.uint32))
        sys.modules["numpy.dtypes"] = dtypes
        np.dtypes = dtypes


def arm():
    """From now on every placeholder use is recorded in USED."""
    _armed[0] = True


def lazy(root, name):
    """Registers package NAME (under source tree ROOT) without its `from .x import y` lines."""
    path = os.path.join(root, *name.split("."))
    init = os.path.join(path, "__init__.py")
    with open(init) as f:
        tree = ast.parse(f.read())
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = name.rsplit(".", node.level - 1)[0] if node.level > 1 else name
            module = (base + ("." + node.module if node.module else "")) if node.level else node.module
            for alias in node.names:
                names[alias.asname or alias.name] = (module, alias.name)
    package = types.ModuleType(name)
    package.__path__ = [path]
    package.__package__ = name
    package.__file__ = init

    def resolve(attr):
        if attr not in names:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}")
        module, original = names[attr]
        sub = os.path.join(root, *(module + "." + original).split("."))
        if os.path.isdir(sub) or os.path.exists(sub + ".py"):
            value = importlib.import_module(module + "." + original)
        elif module == name:
            raise AttributeError(attr)
        else:
            value = getattr(importlib.import_module(module), original)
        setattr(package, attr, value)
        return value

    package.__getattr__ = resolve
    sys.modules[name] = package
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(importlib.import_module(parent), child, package)
    own = name.split(".")[0]
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.module and \
                (statement.level > 0 or statement.module.split(".")[0] == own):
            continue
        code = compile(ast.Module([statement], []), init, "exec")
        while True:
            try:
                exec(code, package.__dict__)
                break
            except NameError as e:
                if e.name not in names or e.name in package.__dict__:
                    raise
                try:
                    resolve(e.name)
                except Exception as why:
                    first = ast.unparse(statement).splitlines()[0][:70]
                    SKIPPED.append(f"{name}/__init__.py:{statement.lineno} {first} (needs {e.name}: {type(why).__name__})")
                    break


def missing_prerequisite(source, project, repo, cli, modules):
    """Why a check cannot run here (the caller prints it as SKIP), or None: the upstream
    source, meshwork-cli, torch, then the Python packages upstream's imports need."""
    if not os.path.exists(source):
        return f"no {project} source at {source} (fetch github:{repo})"
    if not os.access(cli, os.X_OK):
        return f"no meshwork-cli at {cli}"
    why = find_torch()
    if why:
        return why
    for module in modules:
        try:
            __import__(module)
        except ImportError:
            return (f"{project}'s imports need the Python package {module!r} "
                    f"(Debian: python3-{module.replace('_', '-')})")
    return None


def find_torch():
    """Imports torch; where this interpreter has none, Debian's python3-torch (installed in
    the system's dist-packages for the same Python minor version) is added at the end of
    sys.path. Returns a reason string when torch cannot be had, else None."""
    try:
        import torch  # noqa: F401
        return None
    except ImportError:
        pass
    system = "/usr/lib/python3/dist-packages"
    if os.path.isdir(os.path.join(system, "torch")) and sys.version_info[:2] == _debian_python():
        sys.path.append(system)
        try:
            import torch  # noqa: F401
            return None
        except ImportError as e:
            return f"torch in {system} does not import: {e}"
    return f"no torch for {sys.executable} (Debian: apt-get install python3-torch)"


def _debian_python():
    """(major, minor) that Debian's torch extension was built for, from its file name."""
    system = "/usr/lib/python3/dist-packages/torch"
    if not os.path.isdir(system):
        return None
    for entry in os.listdir(system):
        if entry.startswith("_C.cpython-") and entry.endswith(".so"):
            tag = entry.split("-")[1]  # "311"
            return (int(tag[0]), int(tag[1:]))
    return None
