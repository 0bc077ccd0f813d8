"""The package's map stays true: every public module of ``posenc`` is listed in the package
docstring and has a page in the API reference (``book/api/<module>.md``). A self-test
removes a module from the docstring and an API page from the list and sees each check
fail."""

from __future__ import annotations

import pkgutil
import re

from conftest import BOOK

import posenc


def public_modules() -> list[str]:
    """Names of posenc's public top-level modules and subpackages."""
    return sorted(m.name for m in pkgutil.iter_modules(posenc.__path__)
                  if not m.name.startswith("_"))


def missing_from_map(doc: str, modules: list[str]) -> list[str]:
    listed = set(re.findall(r":mod:`posenc\.(\w+)`", doc))
    return [m for m in modules if m not in listed]


def missing_api_pages(pages: set[str], modules: list[str]) -> list[str]:
    return [m for m in modules if m not in pages]


def _api_pages() -> set[str]:
    return {p.stem for p in (BOOK / "api").glob("*.md")}


def test_public_modules_found():
    assert {"rope", "scaling", "hf_config", "cli", "experiments"} <= set(public_modules())


def test_package_docstring_lists_every_module():
    assert missing_from_map(posenc.__doc__, public_modules()) == []


def test_every_module_has_an_api_page():
    assert missing_api_pages(_api_pages(), public_modules()) == []


def test_self_test_a_missing_module_is_caught():
    doc = posenc.__doc__.replace(":mod:`posenc.mla`", "mla")
    assert missing_from_map(doc, public_modules()) == ["mla"]
    assert missing_api_pages(_api_pages() - {"fire"}, public_modules()) == ["fire"]
