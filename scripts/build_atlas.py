"""Regenerate ``book/atlas.md``: one row per RoPE family of the pinned ``transformers``.

The families come from ``transformers`` itself, through the sweep's own discovery
(``tests/hf_sweep.py``: every model type whose modeling module defines a text rotary
embedding, read through its text config); each family's default text config goes through
:func:`posenc.hf_config.atlas.atlas_rows`, and :func:`posenc.hf_config.atlas.render_page`
writes the page. Model types that are not text models are listed apart; families whose
default config ``transformers`` cannot build are listed with the error.

    python scripts/build_atlas.py           # write book/atlas.md
    python scripts/build_atlas.py --check   # exit 1 if book/atlas.md is not what it writes

``tests/test_atlas.py`` runs :func:`build_page` and compares it with the committed file.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "book" / "atlas.md"
TESTS = ROOT / "tests"
COMMAND = "python scripts/build_atlas.py"
#: How a rotary module falls back on an M-RoPE section of its own when the config has none
#: (``config.rope_parameters.get("mrope_section", [16, 24, 24])`` in Qwen2-VL).
MROPE_DEFAULT = re.compile(r"""get\(\s*["']mrope_section["']\s*,\s*\[([\d,\s]+)\]\s*\)""")


def _load(name: str):
    """A module of ``tests/`` by path (``hf_sweep``, ``test_hf_sweep``)."""
    if name not in sys.modules:
        if str(TESTS) not in sys.path:
            sys.path.insert(0, str(TESTS))  # test_hf_sweep imports hf_sweep by name
        spec = importlib.util.spec_from_file_location(name, TESTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def mrope_default(sweep, model_type: str) -> tuple[int, ...] | None:
    """The ``mrope_section`` a family's text rotary module uses without one in the
    config, read from the module's source (``None``: it has no such fallback)."""
    module = sweep._modeling(model_type)
    for cls in sweep.rotary_classes(module) if module is not None else ():
        found = MROPE_DEFAULT.search(inspect.getsource(cls))
        if found:
            return tuple(int(x) for x in found.group(1).split(",") if x.strip())
    return None


def build_page() -> str:
    """The atlas page for the installed ``transformers`` (what the command writes)."""
    import transformers

    from posenc.hf_config import atlas

    sweep = _load("hf_sweep")
    checked_elsewhere = getattr(_load("test_hf_sweep"), "CHECKED_ELSEWHERE", {})
    families = sweep.text_families()
    configs, outer, unbuildable = {}, {}, {}
    for name, fam in families.items():
        if not fam.is_text:
            continue
        if fam.build_error:
            unbuildable[name] = fam.build_error
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            configs[name] = sweep.default_text_config(name)
        outer[name] = fam.outer
    mrope = {name: m for name in configs if (m := mrope_default(sweep, name))}
    rows = atlas.atlas_rows(configs, outer, mrope)
    not_text = [name for name, fam in families.items() if not fam.is_text]
    return atlas.render_page(rows, version=transformers.__version__, command=COMMAND,
                             not_text=not_text, unbuildable=unbuildable,
                             checked_elsewhere=checked_elsewhere)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if book/atlas.md differs from what would be written")
    args = parser.parse_args(argv)
    page = build_page()
    if args.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.is_file() else ""
        if current != page:
            print(f"{PAGE.relative_to(ROOT)} is stale: run {COMMAND}", file=sys.stderr)
            return 1
        print(f"{PAGE.relative_to(ROOT)} is up to date")
        return 0
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
