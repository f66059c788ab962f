#!/usr/bin/env python3
"""Runs torchtitan's own config and mesh code on Meshwork's torchtitan exports.

Not a ctest: it needs a torchtitan git directory (e.g. from `fetch github:pytorch/torchtitan`)
and no torch. The upstream files are read from git at the pinned commits and executed with
torch/tyro/spmd_types replaced by stand-ins, so that what runs is upstream's own code:

  v0.2.2: ConfigManager._dict_to_dataclass(JobConfig, toml) (unknown keys raise), the
          converter registry names, ParallelDims(...) (_validate) and build_mesh() on a
          stand-in DeviceMesh whose _unflatten refuses degrees that do not fill the world
          (as torch does), and parallelize_llama's DDP condition (parallelize.py:148-151).
  main:   the exported module is executed against upstream's TrainingConfig and
          ParallelismConfig (kw_only, slots: unknown names raise), model_registry's flavor
          table, the config_registry base function and converter names; then ParallelDims
          and build_mesh as above, the batch arithmetic of trainer.py:409-427 and the CUDA
          graph check of trainer.py:170-199.

usage: check_torchtitan.py TORCHTITAN_GIT_DIR MESHWORK_CLI [--main COMMIT] [--v02 TAG]
Prints one line per case and 'N passed, N failed'.
"""
import argparse
import ast
import itertools
import json
import math
import subprocess
import sys
import tomllib
import types

MAIN_COMMIT = "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a"
V02_TAG = "v0.2.2"


def git_show(gitdir, rev, path):
    return subprocess.run(["git", f"--git-dir={gitdir}", "show", f"{rev}:{path}"], check=True,
                          capture_output=True, text=True).stdout


class FakeMesh:
    """A DeviceMesh stand-in: named axes with sizes; _unflatten checks the product like torch."""

    def __init__(self, names, sizes):
        self.mesh_dim_names = tuple(names)
        self.sizes = dict(zip(names, sizes))
        self.ndim = len(names)

    def size(self):
        return math.prod(self.sizes.values())

    def _unflatten(self, dim, sizes, names, backend_override=None):
        if math.prod(sizes) != self.size() or any(s < 1 for s in sizes):
            raise RuntimeError(f"cannot unflatten {self.size()} ranks into {dict(zip(names, sizes))}")
        return FakeMesh(names, sizes)

    def __getitem__(self, names):
        names = (names,) if isinstance(names, str) else tuple(names)
        return FakeMesh(names, [self.sizes[n] for n in names])

    def _flatten(self, name):
        return FakeMesh((name,), (self.size(),))


class AnyObj:
    """Whatever a stand-in module is asked for: attributes, calls, subscripts, unions."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return AnyObj()

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # used as a decorator
        return AnyObj()

    def __getitem__(self, item):
        return AnyObj()

    def __or__(self, other):
        return AnyObj()

    __ror__ = __or__


def install_stubs():
    class Anything(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return AnyObj()

    torch = Anything("torch")
    torch.cuda = types.SimpleNamespace(is_available=lambda: False, get_device_capability=lambda: (9, 0))
    torch.version = types.SimpleNamespace(hip=None)
    dm = types.ModuleType("torch.distributed.device_mesh")
    dm.DeviceMesh = FakeMesh
    dm.init_device_mesh = lambda device_type, shape, mesh_dim_names: FakeMesh(mesh_dim_names, shape)
    sys.modules.update({"torch": torch, "torch.distributed": Anything("torch.distributed"),
                        "torch.distributed.device_mesh": dm})
    tyro = Anything("tyro")
    tyro.conf = Anything("tyro.conf")
    sys.modules["tyro"] = tyro
    spmd = Anything("spmd_types")
    sys.modules["spmd_types"] = spmd
    logging = types.ModuleType("torchtitan.tools.logging")
    logging.logger = types.SimpleNamespace(info=lambda *a, **k: None, warning=lambda *a, **k: None)
    utils = types.ModuleType("torchtitan.tools.utils")
    utils.device_type = "cuda"
    for name in ("torchtitan", "torchtitan.tools", "torchtitan.config", "torchtitan.distributed"):
        sys.modules[name] = types.ModuleType(name)
    sys.modules["torchtitan.tools.logging"] = logging
    sys.modules["torchtitan.tools.utils"] = utils


def load(name, source):
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def registered_converters(gitdir, rev):
    names = set()
    for path in ("torchtitan/components/quantization/float8.py", "torchtitan/components/quantization/mx.py"):
        for node in ast.walk(ast.parse(git_show(gitdir, rev, path))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "register_model_converter":
                names.add(node.args[1].value)
    return names


def flavors(gitdir, rev, model, table):
    for node in ast.walk(ast.parse(git_show(gitdir, rev, f"torchtitan/models/{model}/__init__.py"))):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == table:
            return {k.value for k in node.value.keys}
    return set()


def functions(gitdir, rev, path):
    return {n.name for n in ast.parse(git_show(gitdir, rev, path)).body if isinstance(n, ast.FunctionDef)}


def export(cli, fmt, flags):
    out = subprocess.run([cli, "export", "--format", fmt, "--allow-lossy", "--json", *flags],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip()
    j = json.loads(out.stdout)
    return j["content"], j["lost"]


def check_v02(mods, converters, text, gpus):
    data = tomllib.loads(text)
    manager = object.__new__(mods["manager"].ConfigManager)
    cfg = manager._dict_to_dataclass(mods["job_config"].JobConfig, data)
    for c in cfg.model.converters:
        if c not in converters:
            raise KeyError(f"converter {c!r} is not registered")
    p = cfg.parallelism
    dims = mods["pd"].ParallelDims(dp_replicate=p.data_parallel_replicate_degree, dp_shard=p.data_parallel_shard_degree,
                                   cp=p.context_parallel_degree, tp=p.tensor_parallel_degree,
                                   pp=p.pipeline_parallel_degree, ep=p.expert_parallel_degree,
                                   etp=p.expert_tensor_parallel_degree, world_size=gpus)
    dims.build_mesh()
    # torchtitan/models/llama3/infra/parallelize.py:125-151 (v0.2.2)
    if not dims.fsdp_enabled and dims.dp_replicate_enabled and dims.world_size != dims.dp_replicate:
        raise RuntimeError("DDP has not supported > 1D parallelism")


def check_main(mods, tables, text, gpus, unknown_flavor_declared=False):
    configs = mods["configs"]
    captured = {}

    class Base:
        def __init__(self):
            self.training = configs.TrainingConfig()
            self.parallelism = configs.ParallelismConfig()
            self.activation_checkpoint = "selective"
            self.model_spec = None

    def base_function(name, model):
        if name not in tables["functions"][model]:
            raise KeyError(f"{model}.config_registry has no {name}()")
        return Base

    def model_registry_for(model):
        def model_registry(flavor, converters=None, **kw):
            if flavor not in tables["flavors"][model] and not unknown_flavor_declared:
                raise KeyError(f"{model} has no flavor {flavor!r}")
            captured["flavor"] = flavor
            return ("spec", model, flavor)
        return model_registry

    class Policy:
        class Config:
            def __init__(self, **kw):
                pass

    mod_config = sys.modules["torchtitan.config"]
    mod_config.ParallelismConfig = configs.ParallelismConfig
    mod_config.TrainingConfig = configs.TrainingConfig
    ac = types.ModuleType("torchtitan.distributed.activation_checkpoint")
    ac.FullAC = ac.SelectiveAC = Policy
    sys.modules["torchtitan.distributed.activation_checkpoint"] = ac
    quant = types.ModuleType("torchtitan.components.quantization")
    for name in tables["converters"]:
        setattr(quant, name, Policy)
    sys.modules["torchtitan.components"] = types.ModuleType("torchtitan.components")
    sys.modules["torchtitan.components.quantization"] = quant
    trainer = types.ModuleType("torchtitan.trainer")
    trainer.Trainer = types.SimpleNamespace(Config=Base)
    sys.modules["torchtitan.trainer"] = trainer
    sys.modules["torchtitan.models"] = types.ModuleType("torchtitan.models")
    for model in tables["flavors"]:
        m = types.ModuleType(f"torchtitan.models.{model}")
        m.model_registry = model_registry_for(model)
        sys.modules[m.__name__] = m
        reg = types.ModuleType(f"torchtitan.models.{model}.config_registry")
        reg.__getattr__ = (lambda model: lambda name: (lambda: base_function(name, model)()))(model)
        sys.modules[reg.__name__] = reg
        m.config_registry = reg
    ns = {}
    exec(compile(text, "exported", "exec"), ns)
    fns = [v for v in ns.values() if isinstance(v, types.FunctionType) and v.__code__.co_filename == "exported"]
    if len(fns) != 1:
        raise ValueError(f"{len(fns)} config functions in the module")
    config = fns[0]()
    t, p = config.training, config.parallelism
    dims = mods["pd_main"].ParallelDims.from_config(p, gpus)
    dims.build_mesh()
    # torchtitan/trainer.py:409-427 (main)
    micro = p.num_pp_microbatches if dims.pp_enabled else 1
    per_rank = t.num_tokens_per_microbatch_per_dp_rank * micro
    dp = dims.dp_replicate * dims.dp_shard
    step = t.num_tokens_per_train_step if t.num_tokens_per_train_step >= 0 else per_rank * dp
    if step % (per_rank * dp) != 0:
        raise ValueError("num_tokens_per_train_step is not a multiple of one accumulation step")
    # torchtitan/trainer.py:170-199 (main): CUDA graphs refuse PP and the default EP dispatcher
    if not t.disable_cuda_graphs and (p.pipeline_parallel_degree > 1 or p.expert_parallel_degree > 1):
        raise ValueError("CUDA graphs do not support pipeline/expert parallelism: disable_cuda_graphs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gitdir")
    ap.add_argument("cli")
    ap.add_argument("--main", default=MAIN_COMMIT)
    ap.add_argument("--v02", default=V02_TAG)
    ap.add_argument("--toml-format", default="torchtitan-toml",
                    help="the export format that writes the v0.2 TOML (an older meshwork-cli: torchtitan)")
    ap.add_argument("--only", choices=["v02", "main"], help="check one target only")
    a = ap.parse_args()
    install_stubs()
    mods = {}
    mods["job_config"] = load("torchtitan.config.job_config", git_show(a.gitdir, a.v02, "torchtitan/config/job_config.py"))
    mods["manager"] = load("torchtitan.config.manager",
                           git_show(a.gitdir, a.v02, "torchtitan/config/manager.py")
                           .replace("from .job_config import", "from torchtitan.config.job_config import"))
    mods["pd"] = load("torchtitan.distributed.parallel_dims_v02", git_show(a.gitdir, a.v02, "torchtitan/distributed/parallel_dims.py"))
    mods["configs"] = load("torchtitan.config.configs", git_show(a.gitdir, a.main, "torchtitan/config/configs.py"))
    mods["pd_main"] = load("torchtitan.distributed.parallel_dims", git_show(a.gitdir, a.main, "torchtitan/distributed/parallel_dims.py"))
    converters = registered_converters(a.gitdir, a.v02)
    quant_init = ast.parse(git_show(a.gitdir, a.main, "torchtitan/components/quantization/__init__.py"))
    tables = {
        "flavors": {"llama3": flavors(a.gitdir, a.main, "llama3", "llama3_configs"),
                    "deepseek_v3": flavors(a.gitdir, a.main, "deepseek_v3", "deepseekv3_configs")},
        "functions": {m: functions(a.gitdir, a.main, f"torchtitan/models/{m}/config_registry.py")
                      for m in ("llama3", "deepseek_v3")},
        "converters": {n.name for n in ast.walk(quant_init) if isinstance(n, ast.alias)},
    }
    cases = []
    for model, gpus, axes in [
        ("llama3-8b", 16, [(tp, pp, cp, 1, 1) for tp in (1, 2, 4) for pp in (1, 2) for cp in (1, 2)]),
        ("llama3-70b", 64, [(8, 4, 1, 1, 1), (8, 2, 2, 1, 1), (4, 4, 1, 1, 1)]),
        ("llama3.1-405b", 128, [(8, 8, 1, 1, 1), (8, 4, 2, 1, 1)]),
        ("deepseek-v3", 256, [(1, 8, 1, 32, 1), (2, 4, 1, 16, 1), (2, 4, 1, 8, 2), (4, 2, 2, 16, 1), (1, 1, 1, 64, 1)]),
        ("mixtral-8x7b", 64, [(2, 4, 1, 8, 1), (1, 1, 1, 8, 1), (2, 2, 1, 4, 2)]),
    ]:
        for (tp, pp, cp, ep, etp), zero, extra in itertools.product(
                axes, (0, 1, 2, 3), ([], ["--dtype", "fp8"], ["--recompute", "full"])):
            flags = ["--model", model, "--cluster", "dgx-h100", "--gpus", str(gpus), "--tp", str(tp), "--pp", str(pp),
                     "--cp", str(cp), "--ep", str(ep), "--etp", str(etp), "--zero", str(zero), "--mbs", "1",
                     "--gbs", "512", *extra]
            cases.append((" ".join(flags[1:]), gpus, flags))
    passed = failed = 0
    for name, gpus, flags in cases:
        for target, fmt in (("v02", a.toml_format), ("main", "torchtitan")):
            if a.only and a.only != target:
                continue
            text, lost = export(a.cli, fmt, flags)
            if text is None:
                print(f"skip {fmt} {name}: not a valid layout ({lost.splitlines()[-1] if lost else ''})")
                continue
            try:
                if target == "v02":
                    check_v02(mods, converters, text, gpus)
                else:
                    # A model torchtitan has no flavor of is declared lost by the export.
                    check_main(mods, tables, text, gpus, any("has no flavor" in x for x in lost))
                passed += 1
            except Exception as e:  # upstream's own error is the finding
                failed += 1
                print(f"FAIL {fmt} {name}: {type(e).__name__}: {e}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
