"""Every figure has alt text that says what it shows (WCAG 2.1, 1.1.1 Non-text Content).

A notebook figure is an image output of a code cell. myst-nb renders it as an ``<img>``
whose ``alt`` comes from the cell's metadata ``{"mystnb": {"image": {"alt": "..."}}}``
(myst-nb's ``render_image_options``, cell key ``image``; see CONTRIBUTING.md); without it
Sphinx writes the image's file name as its alt, which a screen reader reads out as a
64-digit hash. So every code cell with an image output must carry that metadata, and the
text must describe the figure: at least :data:`MIN_WORDS` words, not a file name, not a
placeholder such as "figure" or "plot". Images in the Markdown pages and cells (``![]()``,
``<img>``, ``{image}``/``{figure}``) need alt text too. tests/test_browser.py checks that
the built pages carry it.

These checks read the files only (no kernel, no build).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import BOOK, notebooks

NOTEBOOKS = notebooks()
IDS = [p.name for p in NOTEBOOKS]
#: Fewer words cannot say what a figure shows (its kind, its axes and what to see).
MIN_WORDS = 8
#: Alt text that names the kind of thing instead of describing it.
PLACEHOLDERS = re.compile(r"^\W*(an?\s+)?(figure|image|plot|graph|chart|picture|png)\b", re.I)
IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml", "image/gif")
#: A word, for :func:`words`: a run of Latin letters or digits, or up to two Chinese
#: characters (the Chinese edition's alt texts have no spaces between words; a modern
#: Chinese word is mostly one or two characters, so a pair stands in for a word).
WORD = re.compile(r"[\u4e00-\u9fff]{1,2}|[^\s\u3000-\u303f\uff00-\uffef\u4e00-\u9fff]+")


def words(text: str) -> int:
    """How many words ``text`` holds, in English or Chinese (:data:`WORD`)."""
    return len(WORD.findall(text))


def figure_cells(nb: dict) -> list[tuple[int, dict]]:
    """``(index among all cells, cell)`` of every code cell with an image output."""
    return [
        (i, cell) for i, cell in enumerate(nb["cells"])
        if cell["cell_type"] == "code"
        and any(m in out.get("data", {}) for out in cell["outputs"] for m in IMAGE_TYPES)
    ]


def alt_problem(alt) -> str | None:
    """Why ``alt`` is not meaningful alt text, or ``None`` if it is."""
    if not isinstance(alt, str) or not alt.strip():
        return "no alt text"
    if re.search(r"\.(png|jpe?g|svg|gif)\b", alt, re.I) or re.fullmatch(r"[\w/.-]+", alt):
        return f"alt text is a file name: {alt!r}"
    if PLACEHOLDERS.match(alt) and words(alt) < MIN_WORDS:
        return f"alt text names the kind of image, not what it shows: {alt!r}"
    if words(alt) < MIN_WORDS:
        return f"alt text of fewer than {MIN_WORDS} words: {alt!r}"
    return None


def missing_alt(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    for index, cell in figure_cells(nb):
        alt = cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt")
        why = alt_problem(alt)
        if why:
            first = "".join(cell["source"]).splitlines()[:1] or [""]
            problems.append(f"cell {index} ({first[0][:60]!r}): {why}")
    return problems


def test_alt_problem_tells_good_from_bad():
    good = ("Line plot of the attention weight against distance for four heads, "
            "falling fastest for head 0.")
    assert alt_problem(good) is None
    for bad in (None, "", "   ", "figure", "A plot", "../_images/f632b6.png", "heatmap_1",
                "Sinusoidal encoding heatmap", "一张热图", "正弦编码的热图",
                "位置编码 热图 64 行"):
        assert alt_problem(bad), bad


def test_words_are_counted_in_english_and_in_chinese():
    """The Chinese edition's alt texts have no spaces: counted by whitespace, a full
    description is one or a few "words" (the check failed on 3 of them); counted by
    character pairs, it is long, and a short caption is still short."""
    chinese = ("两个面板，显示一张 64 行位置表的第 8 个通道：原始行以点画在偶数位置上，"
               "插值到 127 行的表画成线。")
    assert len(chinese.split()) < MIN_WORDS  # what the old count saw
    assert words(chinese) >= MIN_WORDS and alt_problem(chinese) is None
    assert words("Line plot of the weight, 4 heads.") == 7
    assert words("正弦编码") == 2 and words("正弦编码的热图") == 4


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_notebook_figure_has_alt_text(path):
    problems = missing_alt(path)
    assert not problems, (
        f"{path.name}: give each figure cell alt text in its metadata, "
        '{"mystnb": {"image": {"alt": "what the figure shows"}}} (CONTRIBUTING.md):\n'
        + "\n".join(problems)
    )


#: Markdown images: ![alt](src), <img ...>, and the {image}/{figure} directives' :alt:.
MD_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)]+)\)")
HTML_IMG = re.compile(r"<img\b[^>]*>", re.I)
DIRECTIVE = re.compile(r"^(`{3,}|:{3,})\{(image|figure)\}[^\n]*\n(?P<body>.*?)^\1", re.S | re.M)


def markdown_image_problems(text: str) -> list[str]:
    problems = []
    for m in MD_IMAGE.finditer(text):
        why = alt_problem(m["alt"])
        if why:
            problems.append(f"![...]({m['src']}): {why}")
    for tag in HTML_IMG.findall(text):
        alt = re.search(r'\balt\s*=\s*"([^"]*)"', tag)
        why = alt_problem(alt.group(1) if alt else None)
        if why:
            problems.append(f"{tag[:60]}: {why}")
    for m in DIRECTIVE.finditer(text):
        alt = re.search(r"^:alt:\s*(.+)$", m["body"], re.M)
        why = alt_problem(alt.group(1) if alt else None)
        if why:
            problems.append(f"{{{m.group(2)}}} directive: {why}")
    return problems


def test_markdown_image_checker_catches_missing_alt():
    text = ('![](a.png)\n<img src="b.png">\n```{figure} c.png\n:width: 50%\n```\n'
            "![A heatmap of the bias over query and key positions, constant along "
            "diagonals](d.png)\n")
    problems = markdown_image_problems(text)
    assert len(problems) == 3, problems


def test_markdown_images_have_alt_text():
    sources = {p.name: p.read_text(encoding="utf-8") for p in sorted(BOOK.rglob("*.md"))}
    for path in NOTEBOOKS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        sources[path.name] = "\n".join(
            "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"
        )
    problems = [f"{name}: {p}" for name, text in sources.items()
                for p in markdown_image_problems(text)]
    assert not problems, "images without meaningful alt text:\n" + "\n".join(problems)
