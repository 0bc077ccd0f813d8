"""The build steps that keep the site's pages light (booktools.site.icons, .images,
.highlight and .assets), each made to fail on purpose: an icon in use must keep its glyph
rule and its glyph, a figure that indexed colour would visibly change must stay as it is,
a code token drawn in a colour of its own keeps its span, and a page that uses
sphinx-design keeps its files. In a browser, tests/test_browser_styles.py checks that an
unwrapped token looks as it did, and tests/test_browser.py measures the pages' weights
(PAGE_WEIGHT_LIMIT)."""

from __future__ import annotations

import hashlib
import io
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from booktools.site import assets, highlight, icons, images, theme_css
from booktools.site.icons import THEME_CSS

SHEET = (
    '.fa-inverse{color:#fff}.fa-sun:before{content:"\\f185"}'
    '.fa-moon:before,.fa-crescent:before{content:"\\f186"}.fa-gear:before{content:"\\f013"}'
    ':root{--pst-icon-github:"\uf09b"}.admonition:before{content:"\\f304"}'
)


def test_unused_icon_rules_go_and_used_ones_stay():
    css, kept, dropped = icons.prune_glyph_rules(SHEET, {"sun", "moon", "inverse"})
    assert ".fa-sun:before" in css and ".fa-moon:before" in css
    assert ".fa-gear" not in css and ".fa-crescent" not in css  # unused icon, unused alias
    assert ".fa-inverse{color:#fff}" in css  # utility classes are not glyph rules
    assert kept == {0xF185, 0xF186} and dropped == 1
    # glyphs drawn outside the glyph rules: an escape, and a variable holding the character
    assert icons.private_use(icons.GLYPH_RULE.sub("", css)) == {0xF09B, 0xF304}
    # on purpose: an icon no page names loses its rule
    assert ".fa-sun" not in icons.prune_glyph_rules(SHEET, set())[0]


def _plot(path, colours: int) -> None:
    """An opaque 300 x 200 'figure': white, with ``colours`` distinct shades in bands
    (spread over the whole colour cube, so no two are close)."""
    pixels = np.full((200, 300, 3), 255, dtype=np.uint8)
    band = 300 // (2 * colours)
    shades = np.random.default_rng(1).choice(256**3 - 1, colours, replace=False)
    for i, shade in enumerate(shades):
        pixels[:, 2 * i * band : (2 * i + 1) * band] = [shade >> 16, shade >> 8 & 255,
                                                         shade & 255]
    Image.fromarray(pixels).convert("RGBA").save(path)


def test_figures_become_indexed_only_where_invisible(tmp_path):
    few, many = tmp_path / "few.png", tmp_path / "many.png"
    _plot(few, 6)
    data = images.indexed_png(few)
    assert data is not None  # six colours: exact in a palette
    few.write_bytes(data)
    assert Image.open(few).mode == "P"
    # on purpose: 4,000 distinct colours cannot fit 256 without visible change
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(many)
    assert images.indexed_png(many) is None
    # a transparent image is left as it is
    clear = tmp_path / "clear.png"
    Image.new("RGBA", (8, 8), (0, 0, 0, 0)).save(clear)
    assert images.indexed_png(clear) is None


def _gradient(path) -> np.ndarray:
    """An opaque 256 x 256 'heat map': a smooth two-colour gradient (65,536 colours)."""
    y, x = np.mgrid[0:256, 0:256]
    pixels = np.stack([x, y, (x + y) // 2], axis=-1).astype(np.uint8)
    Image.fromarray(pixels).save(path)
    return pixels


def test_each_figure_gets_the_smallest_palette_a_reader_cannot_tell(tmp_path):
    # a few lines fit the smallest palette; a hundred distinct shades (and the white) need
    # 128 colours, and every one of them is kept
    for shades, colours in ((6, 7), (100, 101)):
        plot = tmp_path / f"{shades}.png"
        _plot(plot, shades)
        with Image.open(io.BytesIO(images.indexed_png(plot))) as indexed, \
                Image.open(plot) as original:
            assert indexed.mode == "P" and len(indexed.getcolors()) == colours
            assert images.invisible(indexed, np.asarray(original.convert("RGB")))
    # a hundred shades close to one another: a smaller palette than theirs is invisible,
    # and taken (a palette of 256 would keep all 101 colours)
    close = np.full((200, 300, 3), 255, dtype=np.uint8)
    for i in range(100):
        close[:, 2 * i : 2 * i + 1] = [(i * 37) % 256, (i * 91) % 256, 40]
    Image.fromarray(close).save(tmp_path / "close.png")
    with Image.open(io.BytesIO(images.indexed_png(tmp_path / "close.png"))) as indexed:
        assert len(indexed.getcolors()) < 101 and images.invisible(indexed, close)
    # on purpose: a smooth gradient fits no palette, and stays as it is
    smooth = tmp_path / "smooth.png"
    pixels = _gradient(smooth)
    assert images.indexed_png(smooth) is None
    coarse = Image.fromarray(pixels).quantize(images.PALETTES[-1], dither=Image.Dither.NONE)
    assert not images.invisible(coarse, pixels)


# ------------------------------------------------- code blocks (booktools.site.highlight) ----

#: A code style in two themes, as pydata-sphinx-theme writes pygments.css: names and
#: punctuation in each theme's text colour; keywords bold; strings coloured; whitespace in
#: the text colour in the light theme only.
PYGMENTS = """
html[data-theme="light"] .highlight pre { line-height: 125%; }
html[data-theme="light"] .highlight { background: #fefefe; color: #080808 }
html[data-theme="light"] .highlight .k { color: #080808; font-weight: bold }
html[data-theme="light"] .highlight .n { color: #080808 }
html[data-theme="light"] .highlight .p { color: #080808 }
html[data-theme="light"] .highlight .s2 { color: #0F6B00 }
html[data-theme="light"] .highlight .w { color: #080808 }
html[data-theme="dark"] .highlight { background: #2b2b2b; color: #F8F8F2 }
html[data-theme="dark"] .highlight .k { color: #F8F8F2; font-weight: bold }
html[data-theme="dark"] .highlight .n { color: #F8F8F2 }
html[data-theme="dark"] .highlight .p { color: #f8f8f2 }
html[data-theme="dark"] .highlight .s2 { color: #F8F8F2 }
html[data-theme="dark"] .highlight .w { color: #BBBBBB }
"""


def test_only_tokens_drawn_as_the_code_text_in_every_theme_are_plain():
    assert highlight.plain_classes(PYGMENTS) == {"n", "p"}
    # on purpose: another stylesheet that styles a token inside code keeps its spans
    other = ".bd-content div.highlight span.n{text-decoration:underline}"
    assert highlight.plain_classes(PYGMENTS, (other,)) == {"p"}
    # a stylesheet with no colour for the code block: nothing to compare with
    assert highlight.plain_classes(".highlight .n { color: #080808 }") == frozenset()


def test_plain_token_spans_are_unwrapped_in_code_only():
    html = ('<p><span class="n">prose</span></p><div class="highlight"><pre>'
            '<span class="k">for</span><span class="w"> </span><span class="n">x</span>'
            '<span class="p">:</span><span class="hll"><span class="n">y</span></span>'
            '<span class="nn">a.b</span></pre></div>')
    out = highlight.unwrap_plain_tokens(html, frozenset({"n", "p"}))
    assert out == ('<p><span class="n">prose</span></p><div class="highlight"><pre>'
                   '<span class="k">for</span><span class="w"> </span>x:'
                   '<span class="hll">y</span><span class="nn">a.b</span></pre></div>')
    assert highlight.unwrap_plain_tokens(html, frozenset()) == html
    # a printed output keeps its spans (it keeps the page's text colour), and so does a
    # token inside a link, whose colour may be the link's
    output = ('<div class="output stream highlight-myst-ansi notranslate">'
              '<div class="highlight"><pre><span class="n">x</span></pre></div>')
    assert highlight.unwrap_plain_tokens(output, frozenset({"n"})) == output
    linked = ('<div class="highlight-python notranslate"><div class="highlight"><pre>'
              '<a href="#f"><span class="n">f</span></a><span class="n">g</span></pre></div>')
    assert highlight.unwrap_plain_tokens(linked, frozenset({"n"})) == linked.replace(
        '<span class="n">g</span>', "g")


def test_design_files_stay_only_on_pages_that_use_its_components():
    def files(body: str) -> list[str]:
        context = {"body": body,
                   "css_files": ["_static/sphinx-design.min.css", "_static/basic.css"],
                   "script_files": ["_static/design-tabs.js", "_static/doctools.js"]}
        assets.design_assets_where_used(None, "page", "page.html", context, None)
        return context["css_files"] + context["script_files"]

    assert files("<p>prose, and a <code>sd-card</code> named</p>") == [
        "_static/basic.css", "_static/doctools.js"]
    # on purpose: a page with a card keeps the files
    assert len(files('<div class="sd-card sd-shadow-sm">card</div>')) == 4
    assert len(files('<div class="docutils sd-tab-set">tabs</div>')) == 4


# ---------------------------------------- the theme's stylesheet (booktools.site.theme_css) ----

SHEET_CSS = (
    '/*! Bootstrap licence */:root{--bs-blue:#0d6efd}body{margin:0}'
    '.btn{color:red}.btn-xl{padding:9px}.d-sm-none{display:none}'
    '.nav .active,.nav .unused{font-weight:700}'
    '.card:not(.never-used){border:1px}:is(.gone-a,.gone-b) p{color:blue}'
    '@media (min-width:576px){.col-sm-1{flex:0}.btn{margin:1px}}'
    '@media print{.d-print-none{display:none}}'
    '@font-face{font-family:x;src:url(x.woff)}@keyframes spin{0%{opacity:0}}'
    '.bs-tooltip-auto{inset:0}.w-\\[5\\%\\]{width:5%}'
    '/* a plain comment */a[href^="http"]::after{content:"{ }"}'
)


def test_the_theme_stylesheet_keeps_every_rule_a_page_can_match():
    names = {"btn", "nav", "active", "card", "p"}
    out = theme_css.used_rules(SHEET_CSS, names, prefixes=("bs-",))
    for kept in ("/*! Bootstrap licence */", ":root{--bs-blue:#0d6efd}", "body{margin:0}",
                 ".btn{color:red}", ".nav .active,.nav .unused{font-weight:700}",
                 ".card:not(.never-used){border:1px}", ":is(.gone-a,.gone-b) p{color:blue}",
                 "@media (min-width:576px){.btn{margin:1px}}", "@font-face{font-family:x;",
                 "@keyframes spin{0%{opacity:0}}", ".bs-tooltip-auto{inset:0}",
                 ".w-\\[5\\%\\]{width:5%}", 'a[href^="http"]::after{content:"{ }"}'):
        assert kept in out, kept
    for dropped in (".btn-xl", ".d-sm-none", ".col-sm-1", "@media print", "plain comment"):
        assert dropped not in out, dropped
    # on purpose: once a page uses a class, its rules come back
    assert ".d-sm-none{display:none}" in theme_css.used_rules(SHEET_CSS, names | {"d-sm-none"})
    # a stylesheet it cannot read is refused, not cut
    with pytest.raises(ValueError, match="unbalanced"):
        theme_css.used_rules(".a{color:red", names)


def test_a_scripts_class_names_and_name_prefixes_count_as_used(tmp_path):
    (tmp_path / "page.html").write_text('<div class="nav show">x</div>', encoding="utf-8")
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "b.js").write_text(
        'el.classList.add("collapsing");tip.classList.add(`bs-${NAME}-auto`);'
        'x.className = "col-" + n;y.add("fade-".concat(k));', encoding="utf-8")
    names, prefixes = theme_css.site_names(tmp_path)
    assert {"nav", "show", "collapsing"} <= names
    assert {"bs-", "col-", "fade-"} <= set(prefixes)
    assert theme_css.required_classes(".a.b:not(.c) > :is(.d) .e::before") == ["a", "b", "e"]
    assert theme_css.required_classes('a[href$=".pdf"].x[class*=sd-]') == ["x"]


def test_what_the_stylesheet_parser_keeps_whole():
    css = ("@layer base{.unused-a{color:red}}.kept{content:'}' /* it's } */}"
           "@media print{/* a { comment */.unused-b{color:red}}")
    out = theme_css.used_rules(css, {"kept"})
    assert out == "@layer base{.unused-a{color:red}}.kept{content:'}' /* it's } */}"


def test_the_cut_stylesheet_gets_its_own_digest_in_this_editions_pages(tmp_path):
    sheet = tmp_path / "_static" / THEME_CSS
    sheet.parent.mkdir(parents=True)
    sheet.write_text(".used{color:red}.gone{color:blue}", encoding="utf-8")
    link = f'<link href="_static/{THEME_CSS}?digest=55c26ed414f5f8a31ebb">'
    page = tmp_path / "page.html"
    page.write_text(link + '<p class="used">x</p>', encoding="utf-8")
    other = tmp_path / "zh_CN" / "page.html"  # the other edition's page: not this build's
    other.parent.mkdir()
    other.write_text(link + '<p class="gone">x</p>', encoding="utf-8")
    app = SimpleNamespace(outdir=str(tmp_path), builder=SimpleNamespace(format="html"))
    theme_css.cut_theme_css(app, None)
    assert sheet.read_text(encoding="utf-8") == ".used{color:red}"
    digest = hashlib.sha256(b".used{color:red}").hexdigest()[:20]
    assert f"{THEME_CSS}?digest={digest}" in page.read_text(encoding="utf-8")
    assert other.read_text(encoding="utf-8").startswith(link)
