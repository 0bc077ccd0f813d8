"""The Chinese edition's build: the same sources, ``language: zh_CN``, its own folder.

The English site is ``_build/html`` (README command 1, ``jupyter-book build``). The
Chinese site is built after it into ``_build/html/zh_CN`` (:data:`FOLDER`), so one folder
deploys both and the language switch (:mod:`booktools.site.language_switch`) links them
with relative URLs; its doctrees are its own (``_build/.doctrees-zh_CN``), never the
English ones. Sphinx reads the same notebooks and pages and replaces each message of
prose by its translation from ``locale/zh_CN/LC_MESSAGES/<page>.po``; code cells and
their outputs are the English build's, byte for byte (they are never messages).

What differs from ``_config.yml`` is data, :func:`overrides`: the language, Chinese
search (jieba, with the terminology as its user dictionary: :mod:`booktools.zh_search`),
the theme strings the config can set (:data:`THEME_STRINGS`) and the site's title (the
landing page's translated title). Like README command 1 it is nitpicky with warnings as
errors and keeps going, and it exits non-zero, listing every warning, if there was one;
a clean build that read every page is stamped like the English one
(``_build/posenc-html-zh_CN-stamp.json``, :mod:`booktools.stamp`), so the tests reuse it
(:func:`current_site`).

    python scripts/build_zh.py            # after: jupyter-book build . -n -W --keep-going
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LANGUAGE = "zh_CN"
#: The Chinese site's folder inside the English site's folder.
FOLDER = "zh_CN"
#: Sphinx's search language for the Chinese site (jieba cuts the words).
SEARCH_LANGUAGE = "zh"
#: Theme strings set through the config (myst-nb's prompts of a hidden code cell;
#: ``{type}`` is put into Chinese by booktools.site.zh_strings) and the search box's
#: placeholder. The theme's own strings (buttons, navigation, the search page) come from
#: its bundled zh_CN translations.
THEME_STRINGS = {
    "nb_code_prompt_show": "显示{type}",
    "nb_code_prompt_hide": "隐藏{type}",
    # Jupyter Book sets the English "Search this book..." (merged into its theme options)
    "html_theme_options": {"search_bar_text": "搜索本书……"},
}


def html_dir(root: Path = ROOT) -> Path:
    """Where the Chinese site is written."""
    return Path(root) / "_build" / "html" / FOLDER


def doctree_dir(root: Path = ROOT) -> Path:
    return Path(root) / "_build" / f".doctrees-{LANGUAGE}"


def current_site(root: Path = ROOT) -> Path | None:
    """The Chinese site README command 1 built, if its stamp names the current inputs."""
    import json

    from booktools.stamp import inputs_digest, stamp_path

    html = html_dir(root)
    stamp = stamp_path(html, LANGUAGE)
    if not stamp.is_file() or not (html / "index.html").is_file():
        return None
    try:
        recorded = json.loads(stamp.read_text()).get("inputs")
    except ValueError:
        return None
    return html if recorded is not None and recorded == inputs_digest(Path(root)) else None


def overrides(root: Path, doctrees: Path) -> dict:
    """The Sphinx settings of the Chinese build on top of ``_config.yml``."""
    from jupyter_book.config import get_final_config

    from booktools import zh_search
    from booktools.site import terminology

    base, _ = get_final_config(user_yaml=Path(root) / "_config.yml",
                               cli_config={"latex_individualpages": False},
                               sourcedir=Path(root), use_external_toc=True)
    glossary = terminology.glossary_path(Path(root), LANGUAGE)
    dictionary = zh_search.user_dictionary(glossary, Path(doctrees) / "jieba-userdict.txt")
    return {
        "language": LANGUAGE,
        "nitpicky": True,
        "latex_individualpages": False,
        "external_toc_path": (Path(root) / "_toc.yml").as_posix(),
        **({"html_title": title} if (title := book_title(root, base)) else {}),
        "html_search_language": SEARCH_LANGUAGE,
        "html_search_options": {"dict": str(dictionary)},
        **THEME_STRINGS,
    }


def book_title(root: Path, base: dict) -> str | None:
    """The site's title in Chinese: the translation of the book's title (``_config.yml``'s
    ``title``, the landing page's heading) in the landing page's catalog, if it has one."""
    from babel.messages.pofile import read_po

    catalog = Path(root) / "locale" / LANGUAGE / "LC_MESSAGES" / "book" / "intro.po"
    if not catalog.is_file():
        return None
    with catalog.open("rb") as f:
        message = read_po(f).get(base.get("html_title", ""))
    return message.string if message is not None and message.string else None


class _Tee(io.TextIOBase):
    """Sphinx's warning stream: printed as it comes, and kept to be listed at the end."""

    def __init__(self, stream):
        self.stream, self.lines = stream, []

    def write(self, text: str) -> int:
        self.stream.write(text)
        self.lines.append(text)
        return len(text)


def build(root: Path = ROOT, out: Path | None = None, builder: str = "html",
          doctrees: Path | None = None) -> tuple[int, list[str]]:
    """Build the Chinese edition of the book in ``root`` into ``out`` (default
    :func:`html_dir`); return ``(status, warnings)``, status 0 only for a build without
    a single warning."""
    from jupyter_book.sphinx import build_sphinx

    root = Path(root).resolve()
    out = Path(out) if out is not None else html_dir(root)
    doctrees = Path(doctrees) if doctrees is not None else doctree_dir(root)
    doctrees.mkdir(parents=True, exist_ok=True)
    warnings = _Tee(sys.stderr)
    real_stderr, sys.stderr = sys.stderr, warnings  # build_sphinx logs warnings to stderr
    try:
        status = build_sphinx(
            root, out, noconfig=True, path_config=str(root / "_config.yml"),
            confoverrides=overrides(root, doctrees), doctreedir=doctrees, builder=builder,
            warningiserror=True, keep_going=True)
    finally:
        sys.stderr = real_stderr
    found = [line for line in "".join(warnings.lines).splitlines()
             if re.search(r"WARNING|ERROR", line)]
    if isinstance(status, Exception):
        found.append(f"build failed: {status!r}")
        status = 1
    return (status or (1 if found else 0)), found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the Chinese edition of the book.")
    parser.add_argument("--output", type=Path, default=None,
                        help=f"output folder (default _build/html/{FOLDER})")
    parser.add_argument("--doctrees", type=Path, default=None,
                        help=f"doctree folder (default _build/.doctrees-{LANGUAGE})")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    status, warnings = build(ROOT, args.output, doctrees=args.doctrees)
    seconds = time.perf_counter() - start
    where = args.output or html_dir()
    if status:
        print(f"\nChinese edition: the build FAILED ({len(warnings)} warning(s) or error(s), "
              f"{seconds:.0f} s):", file=sys.stderr)
        for line in warnings:
            print("  " + line, file=sys.stderr)
        return 1
    print(f"\nChinese edition: built into {where} with no warning ({seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
