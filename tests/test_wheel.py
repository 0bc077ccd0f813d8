"""``posenc`` as a user installs it: the built wheel in a fresh virtual environment.

Every other test imports ``posenc`` from the source tree (``pip install -e .``), which
cannot notice a module the package build leaves out. Here, from a copy of the repository's
files (tracked, or untracked and not ignored):

1. ``python -m build --no-isolation`` builds the sdist and, from the sdist, the wheel
   (so the sdist is checked to hold everything the wheel needs);
2. :func:`wheel_problems` compares the wheel with the source tree: every module and data
   file of ``posenc/``, the LICENSE, the version, the dependencies and the console script;
3. :func:`fresh_venv` makes an empty virtual environment outside the repository, installs
   the wheel with ``--no-deps``, and gives it exactly the wheel's declared dependencies and
   theirs (resolved from this environment's metadata and linked in, so that torch is not
   downloaded again) — nothing else: not matplotlib, not transformers, not the source tree;
4. in it, ``python -I`` imports ``posenc`` and every module of the wheel, runs a small
   example, and the command line (``posenc inspect`` and ``python -m posenc inspect``).

Each check has a self-test that breaks it on purpose: a wheel built with the hand-written
package list this project used to have (``posenc.hf_config`` left out) fails both the file
check and the import, and an environment given numpy but not torch cannot import posenc
(so the environment really holds only what it is given).
"""

from __future__ import annotations

import email
import importlib.metadata as md
import json
import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from test_hf_config import GEMMA3_4B_TEXT

import posenc

ROOT = Path(__file__).resolve().parent.parent
#: What the library itself needs; everything else is optional (``[plot]``) or the book's.
RUNTIME = {"numpy", "torch"}
#: Importable in the book's environment, never a dependency of the library: the fresh
#: environment must not see them.
NOT_DEPENDENCIES = ("matplotlib", "transformers", "pytest", "IPython", "jupyter_book")
#: The package list pyproject.toml had before automatic discovery (it left out hf_config).
OLD_PACKAGE_LIST = 'packages = ["posenc", "posenc.experiments"]'


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, **kw)


#: Folders a local build leaves behind (``pip install .``, ``python -m build``): never
#: copied, so an old build's files cannot reach a new wheel.
BUILD_LEFTOVERS = ("build", "dist")


def _source_files(root: Path) -> list[str]:
    """The repository's files as a clean clone would have them (plus untracked new ones)."""
    out = _run(["git", "-C", str(root), "ls-files", "--cached", "--others",
                "--exclude-standard", "-z"])
    assert out.returncode == 0, out.stderr
    return [f for f in out.stdout.split("\0") if f and (root / f).is_file()
            and f.split("/")[0] not in BUILD_LEFTOVERS]


def copy_source(dest: Path) -> Path:
    """Copy the repository's files to ``dest`` (no ``.venv``, ``_build`` or caches)."""
    for rel in _source_files(ROOT):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)
    return dest


def book_machinery(names) -> list[str]:
    """The files of the book's machinery (``tools/``, the package ``booktools``) among an
    archive's ``names``: never part of the library's wheel or sdist."""
    return [n for n in names if n.split("/")[0] in ("tools", "booktools")]


def build(src: Path, out: Path, *, sdist: bool = True) -> dict[str, Path]:
    """Build ``src`` with this environment's setuptools; ``{"wheel": …, "sdist": …}``."""
    cmd = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)]
    if not sdist:
        cmd.insert(-1, "--wheel")
    result = _run(cmd)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    found = {"wheel": next(out.glob("*.whl"))}
    if sdist:
        found["sdist"] = next(out.glob("*.tar.gz"))
    return found


def _expected_files(src: Path) -> set[str]:
    """Every module and data file of ``src/posenc`` (as the wheel should hold them)."""
    files = set()
    for path in (src / "posenc").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py",
                                                                                 ".json"):
            files.add(path.relative_to(src).as_posix())
    return files


def wheel_problems(wheel: Path, src: Path) -> list[str]:
    """What is wrong with ``wheel`` as a build of ``src`` (empty when nothing is).

    Checks: every ``.py`` and ``.json`` under ``src/posenc`` is in the wheel; a LICENSE
    is in its ``.dist-info/licenses``; the version is ``posenc.__version__``; the
    unconditional dependencies are exactly :data:`RUNTIME`, matplotlib only under the
    ``plot`` extra; the console script ``posenc`` runs ``posenc.cli:main``.
    """
    problems = []
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        info = next(n.split("/")[0] for n in names if ".dist-info/" in n)
        meta = email.message_from_string(zf.read(f"{info}/METADATA").decode())
        entry = zf.read(f"{info}/entry_points.txt").decode() \
            if f"{info}/entry_points.txt" in names else ""
    missing = sorted(_expected_files(src) - names)
    if missing:
        problems.append(f"missing from the wheel: {missing}")
    if f"{info}/licenses/LICENSE" not in names:
        problems.append("no LICENSE in the wheel's .dist-info/licenses")
    if meta["Version"] != posenc.__version__:
        problems.append(f"version {meta['Version']} is not posenc.__version__ "
                        f"{posenc.__version__}")
    reqs = [Requirement(r) for r in meta.get_all("Requires-Dist") or []]
    always = {r.name.lower() for r in reqs if r.marker is None}
    if always != RUNTIME:
        problems.append(f"dependencies {sorted(always)}, expected {sorted(RUNTIME)}")
    plot = {r.name.lower() for r in reqs if r.marker is not None
            and r.marker.evaluate({"extra": "plot"})}
    if "matplotlib" not in plot:
        problems.append("matplotlib is not the 'plot' extra")
    if not re.search(r"^posenc\s*=\s*posenc\.cli:main$", entry, re.M):
        problems.append("no console script posenc = posenc.cli:main")
    return problems


def _closure(names) -> list[md.Distribution]:
    """The installed distributions ``names`` need, transitively (markers evaluated, no
    extras), as this environment has them."""
    seen: dict[str, md.Distribution] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        dist = md.distribution(name)  # PackageNotFoundError: this environment lacks it
        seen[key] = dist
        for req in map(Requirement, dist.requires or []):
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return list(seen.values())


def link_dependencies(names, dest: Path) -> Path:
    """A folder holding links to exactly the files of ``names`` and their dependencies."""
    dest.mkdir(parents=True)
    for dist in _closure(names):
        for f in dist.files or []:
            top = f.parts[0]
            if top == ".." or (dest / top).exists():
                continue  # console scripts in bin/; a folder two distributions share
            source = Path(dist.locate_file(top))
            if source.exists():
                (dest / top).symlink_to(source)
    return dest


def fresh_venv(where: Path, wheel: Path, dependencies) -> Path:
    """An empty virtual environment with ``wheel`` installed and only ``dependencies``
    (and theirs) importable; returns its ``python``."""
    venv.create(where / "venv", with_pip=False, symlinks=True)
    python = where / "venv" / "bin" / "python"
    out = _run([sys.executable, "-m", "pip", "--python", str(python), "install",
                "--no-deps", "--no-index", "--quiet", str(wheel)])
    assert out.returncode == 0, out.stdout + out.stderr
    site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    deps = link_dependencies(dependencies, where / "deps")
    (Path(site.stdout.strip()) / "_posenc_test_dependencies.pth").write_text(f"{deps}\n")
    return python


# A config the command line reads in the fresh environment: Llama 3.1 8B's published
# config.json (meta-llama/Llama-3.1-8B), the keys posenc reads.
LLAMA31 = {
    "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_hidden_layers": 32, "max_position_embeddings": 131072,
    "rope_theta": 500000.0, "rope_scaling": {
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
}

USER_SCRIPT = """
import importlib, importlib.metadata, json, pathlib, sys
import posenc
names = json.loads(sys.argv[1])
for name in names:
    importlib.import_module(name)
here = pathlib.Path(posenc.__file__).resolve()
assert pathlib.Path(sys.prefix).resolve() in here.parents, here
assert importlib.metadata.version("posenc") == posenc.__version__
for other in {not_deps!r}:
    try:
        importlib.import_module(other)
    except ModuleNotFoundError:
        continue
    raise AssertionError(f"{{other}} is importable: the environment is not isolated")
try:
    posenc.plotting.use_style()
except ModuleNotFoundError as err:
    assert "pip install matplotlib" in str(err), err
else:
    raise AssertionError("use_style ran without matplotlib")
import torch
pe = posenc.sinusoidal_encoding(3, 4)
q = posenc.apply_rope(pe[None], torch.arange(3))
specs = posenc.layer_specs(sys.argv[2])
kept = bool(torch.allclose(q[0].norm(dim=-1), pe.norm(dim=-1)))  # rotations keep norms
print(len(names), round(float(pe[1, 0]), 4), kept, len(specs), specs[0].rope_type)
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    src = copy_source(tmp_path_factory.mktemp("src"))
    return src, build(src, tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def user_env(built, tmp_path_factory):
    _, dist = built
    where = tmp_path_factory.mktemp("user")
    python = fresh_venv(where, dist["wheel"], sorted(RUNTIME))
    for name, config in (("llama", LLAMA31),
                         ("gemma-3-4b-it", {"model_type": "gemma3",
                                            "text_config": GEMMA3_4B_TEXT})):
        (where / name).mkdir()
        (where / name / "config.json").write_text(json.dumps(config))
    return python, where / "llama" / "config.json"


def readme_library_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Use `posenc` in your own project")
    return text[start:text.index("\n## ", start + 1)]


def test_the_readme_library_section_works_as_written(user_env):
    python, config = user_env
    section = readme_library_section()
    example = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    out = _run([str(python), "-I", "-c", example], cwd=config.parent)
    assert out.returncode == 0, out.stderr[-3000:]
    said = re.search(r"```\n\nprints `(.*?)`\.", section, re.S).group(1)
    assert out.stdout == said + "\n"
    shown = re.search(r"```text\n\$ posenc inspect (\S+)\n(.*?)```", section, re.S)
    printed = _run([str(python.parent / "posenc"), "inspect", shown.group(1)],
                   cwd=config.parent.parent)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == shown.group(2)


def _modules(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        return sorted(
            n.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            for n in zf.namelist()
            if n.endswith(".py") and not n.endswith("__main__.py")
        )


def test_the_wheel_holds_every_module_the_license_and_the_declared_dependencies(built):
    src, dist = built
    assert wheel_problems(dist["wheel"], src) == []
    assert "posenc.hf_config.layers" in _modules(dist["wheel"])
    with zipfile.ZipFile(dist["wheel"]) as zf:
        assert book_machinery(zf.namelist()) == []


def test_the_sdist_holds_the_sources_and_the_license(built):
    src, dist = built
    import tarfile

    with tarfile.open(dist["sdist"]) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    assert {"LICENSE", "pyproject.toml", "README.md"} <= names
    assert _expected_files(src) <= names
    assert book_machinery(names) == []


def test_the_installed_wheel_imports_runs_and_answers_outside_the_repository(built, user_env):
    _, dist = built
    python, config = user_env
    modules = _modules(dist["wheel"])
    script = USER_SCRIPT.format(not_deps=NOT_DEPENDENCIES)
    out = _run([str(python), "-I", "-c", script, json.dumps(modules), str(config.parent)],
               cwd=config.parent)
    assert out.returncode == 0, out.stderr[-4000:]
    assert out.stdout.split() == [str(len(modules)), "0.8415", "True", "32", "llama3"]


def test_the_command_line_of_the_installed_wheel(user_env):
    python, config = user_env
    script = python.parent / "posenc"
    first = _run([str(script), "inspect", str(config)], cwd=config.parent)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[0] == "llama: all full (32 layers)"
    assert "llama3 (factor 8, original_max_position_embeddings 8192" in first.stdout
    as_module = _run([str(python), "-I", "-m", "posenc", "inspect", "--json", "-"],
                     cwd=config.parent, input=config.read_text())
    assert as_module.returncode == 0, as_module.stderr
    assert json.loads(as_module.stdout)["num_layers"] == 32
    refused = _run([str(script), "inspect", "-"], input='{"model_type": "llama9"}')
    assert refused.returncode == 1
    assert "llama9" in refused.stderr and "Traceback" not in refused.stderr


# ------------------------------------------------------------------ self-tests ----------


def test_self_test_book_machinery_is_recognised():
    assert book_machinery(["booktools/atlas.py", "tools/pyproject.toml", "posenc/rope.py",
                           "posenc/hf_config/summary.py"]) == [
        "booktools/atlas.py", "tools/pyproject.toml"]


def test_self_test_a_wheel_built_with_the_old_package_list_fails(tmp_path):
    src = copy_source(tmp_path / "src")
    pyproject = src / "pyproject.toml"
    text = pyproject.read_text()
    find = re.search(r"\[tool\.setuptools\.packages\.find\]\n[^\[]*", text)
    assert find, "pyproject.toml no longer uses [tool.setuptools.packages.find]"
    pyproject.write_text(text.replace(find.group(0), f"[tool.setuptools]\n{OLD_PACKAGE_LIST}\n\n"))
    wheel = build(src, tmp_path / "dist", sdist=False)["wheel"]
    problems = wheel_problems(wheel, src)
    assert any("posenc/hf_config/layers.py" in p for p in problems), problems
    python = fresh_venv(tmp_path, wheel, sorted(RUNTIME))
    out = _run([str(python), "-I", "-c", "import posenc"], cwd=tmp_path)
    assert out.returncode != 0 and "hf_config" in out.stderr, out.stderr[-2000:]


def test_self_test_the_fresh_environment_holds_only_what_it_is_given(built, tmp_path):
    _, dist = built
    python = fresh_venv(tmp_path, dist["wheel"], ["numpy"])
    out = _run([str(python), "-I", "-c", "import posenc"], cwd=tmp_path)
    assert out.returncode != 0 and "No module named 'torch'" in out.stderr, out.stderr[-2000:]
