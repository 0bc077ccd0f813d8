"""The Chinese edition's catalogs and its build: every in-scope message translated, none
fuzzy or obsolete against templates regenerated from the English now, every translation
carrying its message's machinery (booktools.po_tokens); the scope (no catalog for the
per-module API pages); the atlas's generated parts filled by the update command; the
Chinese search index (jieba) finding the book's terms; the terminology page; the
language switch. Each check has a self-test that makes it fail on purpose.

The regeneration (``booktools.catalogs.templates``: Sphinx's gettext builder, in-scope
pages only) takes about 15 s; the Chinese site is the session's (the ``zh_site`` fixture
of tests/conftest.py: README command 1's when its stamp is current, else built once).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from conftest import ROOT

from booktools import catalogs, po_tokens, stamp, zh_build, zh_search
from booktools.site import language_switch, terminology

CHAPTER = "book/01_why_positions"
#: Search terms and the chapter each must find (the issue's check).
SEARCHES = {"外推": "book/07_long_context", "旋转位置编码": "book/04_rope"}


# ------------------------------------------------------------------------ fixtures ----

@pytest.fixture(scope="module")
def pots():
    """The message templates, regenerated from the English of this checkout."""
    found, _ = catalogs.templates(ROOT)
    return found


def _identity_catalog(pot: Catalog) -> Catalog:
    """A complete catalog of ``pot`` whose every translation is its English."""
    catalog = Catalog(locale=catalogs.LANGUAGE)
    for message in pot:
        if message.id:
            catalog.add(message.id, message.id)
    return catalog


def _locale_with(tmp_path: Path, found: dict[str, Catalog]) -> Path:
    """A checkout root under ``tmp_path`` whose catalogs are ``found`` (docname → catalog)
    and whose atlas source is the real one."""
    for docname, catalog in found.items():
        catalogs.write(catalog, catalogs.catalog_dir(tmp_path) / f"{docname}.po")
    (tmp_path / "book").mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "book" / "atlas.md", tmp_path / "book" / "atlas.md")
    return tmp_path


# -------------------------------------------------------------- the catalog check ----

@pytest.mark.slow
def test_catalogs_are_complete_and_current(pots):
    problems = catalogs.check(ROOT, pots)
    assert not problems, (
        f"{len(problems)} problem(s) in the Chinese catalogs; after changing English prose "
        "run `python scripts/i18n.py update`, translate the untranslated and fuzzy "
        "messages, then `python scripts/i18n.py check`:\n" + "\n".join(problems[:60]))


@pytest.mark.slow
def test_every_page_in_scope_has_a_template(pots):
    """The regeneration covers the chapters, landing page, notation, references, the API
    landing page and the atlas, and no per-module API page."""
    assert {"book/intro", "book/notation", "book/references", "book/api", "book/atlas",
            CHAPTER, "book/12_pitfalls"} <= set(pots)
    assert not [d for d in pots if not catalogs.in_scope(d)]
    assert len(pots[CHAPTER]) > 20


@pytest.mark.slow
def test_self_test_a_changed_english_message_fails_until_translated(pots, tmp_path):
    """One English message changed (as the regeneration would see it): the check fails,
    the update marks it fuzzy (the check still fails), a translation fixes it."""
    pot = pots[CHAPTER]
    root = _locale_with(tmp_path, {CHAPTER: _identity_catalog(pot)})
    assert catalogs.check(root, {CHAPTER: pot}) == []
    old = next(m.id for m in pot if m.id and po_tokens.translatable(m.id) and len(m.id) > 60)
    changed = Catalog(locale=catalogs.LANGUAGE)
    for message in pot:
        if message.id:
            changed.add(old.replace(" ", "  ", 1) if message.id == old else message.id)
    problems = catalogs.check(root, {CHAPTER: changed})
    assert any("obsolete" in p for p in problems) and any("new English" in p for p in problems)
    catalogs.update(root, {CHAPTER: changed})
    problems = catalogs.check(root, {CHAPTER: changed})
    assert [p for p in problems if "fuzzy" in p], problems
    catalog = catalogs.read(catalogs.catalog_dir(root) / f"{CHAPTER}.po")
    for message in catalog:
        if message.fuzzy:
            message.flags.discard("fuzzy")
    catalogs.write(catalog, catalogs.catalog_dir(root) / f"{CHAPTER}.po")
    assert catalogs.check(root, {CHAPTER: changed}) == []


@pytest.mark.slow
def test_self_test_english_changed_in_a_copy_of_the_book(pots, tmp_path):
    """End to end: one English sentence changed in a temp copy of the book; the chapter's
    template regenerated from that copy (the chapter alone: the check of the real book
    reads every page) no longer matches the catalog that matched the real book."""
    for part in ("_config.yml", "_toc.yml", "book", "_ext"):
        src = ROOT / part
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, tmp_path / part)
    notebook = tmp_path / f"{CHAPTER}.ipynb"
    data = json.loads(notebook.read_text(encoding="utf-8"))
    cell = next(c for c in data["cells"] if c["cell_type"] == "markdown")
    source = "".join(cell["source"])
    cell["source"] = source.replace("Why positions are needed", "Why positions matter", 1)
    assert cell["source"] != source
    notebook.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    _locale_with(tmp_path, {CHAPTER: _identity_catalog(pots[CHAPTER])})
    copied, _ = catalogs.templates(tmp_path, only=(CHAPTER,))
    assert set(copied) == {CHAPTER, catalogs.ROOT_DOC}  # the other pages were not read
    problems = catalogs.check(tmp_path, {CHAPTER: copied[CHAPTER]})
    assert any("Why positions matter" in p for p in problems), problems
    assert any("obsolete" in p and "Why positions are needed" in p for p in problems)


def _one(msgid: str, msgstr: str, *, fuzzy: bool = False) -> tuple[Catalog, Catalog]:
    pot = Catalog(locale=catalogs.LANGUAGE)
    pot.add(msgid)
    catalog = Catalog(locale=catalogs.LANGUAGE)
    catalog.add(msgid, msgstr, flags=("fuzzy",) if fuzzy else ())
    return pot, catalog


@pytest.mark.parametrize("msgstr, fuzzy, expect", [
    ("", False, "untranslated"),
    ("见 {cite:p}`vaswani2017attention`。", True, "fuzzy"),
    ("见文献。", False, "lost: {cite:p}vaswani2017attention"),
])
def test_self_test_untranslated_fuzzy_and_lost_roles_fail(tmp_path, msgstr, fuzzy, expect):
    msgid = "See {cite:p}`vaswani2017attention` for the details."
    pot, catalog = _one(msgid, msgstr, fuzzy=fuzzy)
    root = _locale_with(tmp_path, {CHAPTER: catalog})
    problems = catalogs.check(root, {CHAPTER: pot})
    assert any(expect in p for p in problems), problems
    good_pot, good = _one(msgid, "细节见 {cite:p}`vaswani2017attention`。")
    assert catalogs.check(_locale_with(tmp_path / "good", {CHAPTER: good}),
                          {CHAPTER: good_pot}) == []


def test_self_test_obsolete_entries_and_out_of_scope_catalogs_fail(tmp_path):
    pot, catalog = _one("Hello there, reader.", "读者你好。")
    catalog.obsolete["Gone sentence."] = catalog["Hello there, reader."]
    root = _locale_with(tmp_path, {CHAPTER: catalog, "book/api/rope": Catalog()})
    problems = catalogs.check(root, {CHAPTER: pot, "book/api/rope": Catalog()})
    assert any("obsolete entry" in p for p in problems), problems
    assert any("book/api/rope.po" in p and "out of scope" in p for p in problems), problems


def test_api_pages_are_out_of_scope_and_have_no_catalog():
    assert not catalogs.in_scope("book/api/rope") and catalogs.in_scope("book/api")
    assert not [d for d in catalogs.catalogs(ROOT) if not catalogs.in_scope(d)]


@pytest.mark.slow
def test_update_fills_the_atlas_table_but_not_its_reading_guide(pots, tmp_path):
    root = _locale_with(tmp_path, {})
    catalogs.update(root, {"book/atlas": pots["book/atlas"]})
    atlas = catalogs.read(catalogs.catalog_dir(root) / "book/atlas.po")
    left = [m.id for m in atlas if m.id and not m.string]
    filled = [m.id for m in atlas if m.id and m.string]
    assert any(m.startswith("How to read a row") for m in left), left
    assert any(m.startswith("Atlas of RoPE models") for m in left)
    assert "`afmoe`" in filled and len(filled) > 10 * len(left)
    # self-test: a rule that calls nothing generated fills nothing but the bare codes
    saved = catalogs.GENERATED.pop("book/atlas")
    try:
        root2 = _locale_with(tmp_path / "none", {})
        catalogs.update(root2, {"book/atlas": pots["book/atlas"]})
        plain = catalogs.read(catalogs.catalog_dir(root2) / "book/atlas.po")
        assert sum(1 for m in plain if m.id and not m.string) > len(left) * 5
    finally:
        catalogs.GENERATED["book/atlas"] = saved


# ------------------------------------------------------------------ search index ----

def test_search_dictionary_keeps_the_glossary_terms_whole(tmp_path):
    glossary = terminology.glossary_path(ROOT, "zh_CN")
    words = zh_search.terms(glossary)
    assert {"外推", "旋转位置编码", "位置编码", "长度外推", "相对位置偏置"} <= set(words)
    dictionary = zh_search.user_dictionary(glossary, tmp_path / "dict.txt")
    assert "旋转位置编码" in zh_search.query_words("旋转位置编码", dictionary)
    # self-test: without the dictionary jieba splits 外推 (into 外 and 推)
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    assert "外推" not in zh_search.query_words("模型在外推时", empty)
    assert "外推" in zh_search.query_words("模型在外推时", dictionary)


def _search_words(query: str, tmp: Path) -> list[str]:
    glossary = terminology.glossary_path(ROOT, "zh_CN")
    return zh_search.query_words(query, zh_search.user_dictionary(glossary, tmp / "dict.txt"))


@pytest.mark.slow
@pytest.mark.parametrize("query", sorted(SEARCHES))
def test_chinese_search_index_finds_the_chapter(zh_site, query, tmp_path):
    index = zh_search.read_index(zh_site)
    words = _search_words(query, tmp_path)
    assert words, f"jieba cut {query!r} into no index word"
    for word in words:
        assert SEARCHES[query] in zh_search.pages_with(index, word), (
            f"the Chinese search index does not map {word!r} (from {query!r}) to "
            f"{SEARCHES[query]}: {sorted(zh_search.pages_with(index, word))}")


@pytest.mark.slow
def test_self_test_index_without_the_chapter_fails(zh_site):
    index = zh_search.read_index(zh_site)
    chapter = index["docnames"].index(SEARCHES["外推"])
    for table in ("terms", "titleterms"):
        for word, hits in index[table].items():
            hits = [hits] if isinstance(hits, int) else hits
            index[table][word] = [h for h in hits if h != chapter]
    assert SEARCHES["外推"] not in zh_search.pages_with(index, "外推")


# --------------------------------------------------------------- the Chinese site ----

@pytest.mark.slow
def test_chinese_pages_are_chinese_with_the_same_code(zh_site):
    english = ROOT / "_build" / "html"
    page = (zh_site / "book" / "04_rope.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN"' in page
    assert "旋转位置编码" in page
    assert 'placeholder="Search this book..."' not in page  # the theme's own Chinese
    assert "显示代码" in page and "Show code cell" not in page
    import re

    def code(html: str) -> list[str]:  # code cells and printed outputs
        return re.findall(r'<div class="highlight[^"]*"><pre>.*?</pre>', html, re.S)

    chapters = sorted((english / "book").glob("[0-9]*.html"))
    for chapter in chapters:
        en = chapter.read_text(encoding="utf-8")
        zh = (zh_site / "book" / chapter.name).read_text(encoding="utf-8")
        assert code(zh) == code(en) and code(en), f"{chapter.name}: code or outputs differ"


#: English interface strings that must not be left on a Chinese page.
ENGLISH_UI = ('placeholder="Search this book..."', "Show code cell", "Hide code cell",
              ">book source<")


@pytest.mark.slow
def test_interface_strings_are_chinese(zh_site):
    from booktools.site import zh_strings

    english = (*zh_strings.STRINGS["zh_CN"]["page strings"], *ENGLISH_UI)
    left = {}
    for name in ("book/04_rope.html", "book/api.html", "search.html", "genindex.html"):
        text = (zh_site / name).read_text(encoding="utf-8")
        left[name] = [e for e in english if e in text]
    assert not any(left.values()), f"English interface strings on Chinese pages: {left}"
    # self-test: the English site has them, so the check can find them
    page = ROOT / "_build" / "html" / "book" / "04_rope.html"
    if page.is_file():
        text = page.read_text(encoding="utf-8")
        assert sum(e in text for e in english) >= 4


@pytest.mark.slow
def test_terminology_table_only_on_the_chinese_notation_page(zh_site):
    page = (zh_site / "book" / "notation.html").read_text(encoding="utf-8")
    data = terminology.load(terminology.glossary_path(ROOT, "zh_CN"))
    assert data["title"] in page and 'class="posenc-terminology' in page
    for term in data["terms"]:
        assert f">{term['zh']}<" in page.replace("</p>", "<").replace("<p>", ">")
    english = ROOT / "_build" / "html" / "book" / "notation.html"
    if english.is_file():
        assert "posenc-terminology" not in english.read_text(encoding="utf-8")


def test_language_switch_links_each_page_to_its_counterpart():
    class Builder:
        @staticmethod
        def get_target_uri(name):
            return name + ".html"

    class App:
        builder = Builder()

        def __init__(self, language):
            self.config = type("C", (), {"language": language})()

    assert language_switch.counterpart(App("en"), "book/api/rope") == \
        "../../zh_CN/book/api/rope.html"
    assert language_switch.counterpart(App("zh_CN"), "book/api/rope") == \
        "../../../book/api/rope.html"
    assert language_switch.counterpart(App("zh_CN"), "search") == "../search.html"
    # self-test: each edition's switch leads to the other and back to the same page
    there = language_switch.counterpart(App("en"), "book/intro")
    assert there == "../zh_CN/book/intro.html"


def test_the_chinese_stamp_lies_beside_the_english_site_not_inside_it(tmp_path):
    html = tmp_path / "_build" / "html"
    assert stamp.stamp_path(html) == tmp_path / "_build" / stamp.STAMP
    zh = stamp.stamp_path(html / zh_build.FOLDER, zh_build.LANGUAGE)
    assert zh == tmp_path / "_build" / "posenc-html-zh_CN-stamp.json"
    assert html not in zh.parents


def test_the_chinese_pdf_check_fails_on_an_english_or_glyphless_pdf():
    """``python scripts/build_pdf.py --language zh_CN`` reads its PDF back and requires the
    edition's words (booktools.pdf.check_language); self-test: English text, or text
    whose CJK glyphs were lost, fails it."""
    from booktools import pdf

    assert pdf.check_language("第 4 章 旋转位置编码（RoPE）…… 外推", "zh_CN") == []
    assert pdf.check_language("Rotary position embedding (RoPE) extrapolation", "zh_CN")
    assert pdf.check_language("\ufffd\ufffd\ufffd\ufffd (RoPE)", "zh_CN")


def test_terminology_file_is_well_formed(tmp_path):
    data = terminology.load(terminology.glossary_path(ROOT, "zh_CN"))
    assert len(data["terms"]) >= 40
    # self-test: an unquoted comma in a flow mapping splits the term, and load() refuses it
    bad = tmp_path / "glossary.yml"
    bad.write_text("title: t\nintro: i\ncolumns: [a, b, c]\n"
                   "terms:\n  - {en: position embedding (learned, a table), zh: 位置嵌入}\n",
                   encoding="utf-8")
    with pytest.raises(ValueError, match="a term has"):
        terminology.load(bad)


# ------------------------------------------------------------ Markdown left literal ----

#: Markdown a translation can break without any build warning: emphasis CommonMark will
#: not close (``**`` beside full-width punctuation), a code span, math, a role, a link or
#: an inline tag that stays as its characters on the page.
MARKDOWN_LITERALS = {
    "**": r"\*\*", "*": r"(?<!\*)\*(?!\*)", "`": r"`", "$": r"\$",
    "{cite": r"\{cite", "{ref": r"\{ref", "](": r"\]\(", "<": r"<",
}
#: Elements whose text is code, math or machinery, not prose.
_NOT_PROSE = {"pre", "code", "kbd", "samp", "script", "style", "svg", "math", "head"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
         "source", "track", "wbr"}


def markdown_literals(html: str) -> dict[str, int]:
    """How often each of MARKDOWN_LITERALS shows in the page's prose (its text outside
    code, preformatted blocks, math and scripts)."""
    from html.parser import HTMLParser

    class Prose(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.skip: list[bool] = []
            self.text: list[str] = []

        def handle_starttag(self, tag, attrs):
            if tag in _VOID:
                return
            classes = (dict(attrs).get("class") or "").split()
            self.skip.append(tag in _NOT_PROSE or "math" in classes
                             or any(c.startswith("highlight") for c in classes))

        def handle_endtag(self, tag):
            if tag not in _VOID and self.skip:
                self.skip.pop()

        def handle_data(self, data):
            if not any(self.skip):
                self.text.append(data)

    parser = Prose()
    parser.feed(html)
    import re

    text = "".join(parser.text)
    return {key: len(re.findall(pattern, text)) for key, pattern in MARKDOWN_LITERALS.items()}


def _more_literals(zh_html: str, en_html: str) -> dict[str, tuple[int, int]]:
    """The literals the Chinese page shows more often than the English one (the baseline)."""
    zh, en = markdown_literals(zh_html), markdown_literals(en_html)
    return {key: (zh[key], en[key]) for key in zh if zh[key] > en[key]}


def test_markdown_literal_check_sees_broken_markup():
    english = ("<p>Use <strong>RoPE</strong>, <code>a*b</code> and "
               '<span class="math">$x$</span> <a href="#x">here</a>.</p>')
    fine = ("<p>使用<strong>“RoPE”</strong>，<code>a*b</code>和"
            '<span class="math">$x$</span><a href="#x">这里</a>。</p>')
    broken = "<p>使用**“RoPE”**，`a*b` 和 $x$ [这里](#x) {cite}`k` &lt;br&gt;。</p>"
    assert _more_literals(fine, english) == {}
    assert set(_more_literals(broken, english)) == {"**", "*", "`", "$", "](", "{cite", "<"}


@pytest.mark.slow
def test_no_markdown_left_literal_on_chinese_pages(zh_site):
    english_site = ROOT / "_build" / "html"
    pages = [p for p in sorted(zh_site.rglob("*.html"))
             if (english_site / p.relative_to(zh_site)).is_file()]
    if not pages:
        pytest.skip("no English site beside the Chinese one (README command 1)")
    broken = {}
    for page in pages:
        english = english_site / page.relative_to(zh_site)
        more = _more_literals(page.read_text(encoding="utf-8"),
                              english.read_text(encoding="utf-8"))
        if more:
            broken[str(page.relative_to(zh_site))] = more
    assert not broken, f"Markdown shown as text (zh, en counts): {broken}"
