"""Only the icons the site uses (a hook of ``_ext/posenc_site.py``, after the build).

pydata-sphinx-theme draws its icons with Font Awesome 6's CSS web fonts (the JavaScript
kit is dropped by :mod:`booktools.site.pages`). Its stylesheet carries a rule for each of
Font Awesome's ~2,000 icons (``.fa-NAME:before{content:"\\f..."}``, about 90 kB) and every
page with an icon loads the whole solid (156 kB) and brands (118 kB) fonts, for the two
dozen icons the site shows. :func:`serve_used_icons`

* finds the icon names the site uses: every ``fa-NAME`` in the written HTML and in the
  site's JavaScript (the theme's scripts name their icons as whole class names), and the
  glyphs the stylesheets draw directly (``content:"\\f..."`` or an icon variable such as
  the admonitions' ``--pst-icon-admonition-note``);
* removes from the theme's stylesheet the glyph rules of icons no page uses (utility
  classes such as ``fa-lg`` or ``fa-spin`` stay), and
* writes each web font again with only the glyphs left (fontTools' subsetter, from the
  TrueType copy the theme ships beside each WOFF2, written as WOFF: reading or writing
  WOFF2 would need the ``brotli`` module), pointing the ``@font-face`` rules at them.

An icon added later to a template or a page is found by the same scan at the next build.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: The theme's stylesheet, relative to ``_static``, which holds Font Awesome's CSS.
THEME_CSS = "styles/pydata-sphinx-theme.css"
#: A glyph rule: selectors that are all ``.fa-NAME:before``/``:after``, one ``content``.
GLYPH_RULE = re.compile(
    r'(?P<sel>(?:\.fa-[a-z0-9-]+:(?:before|after),?)+)\{content:"(?P<code>[^"]*)"\}'
)
#: A CSS escape of a code point (``\f0c1``, ``\30 ``).
ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6}) ?")
FACE = re.compile(r"@font-face\{[^}]*\}")
FONT_URL = re.compile(r"url\((?P<path>[^)]*?/webfonts/(?P<name>fa-[a-z0-9-]+))\.woff2\)")


def used_icon_names(html: Path) -> set[str]:
    """Every ``fa-NAME`` token in the written pages and the site's scripts."""
    names: set[str] = set()
    files = [*html.rglob("*.html"), *(html / "_static").rglob("*.js")]
    for path in files:
        if "mathjax" in path.parts:
            continue
        names.update(re.findall(r"\bfa-([a-z0-9-]+)", path.read_text("utf-8", "replace")))
    return names


def code_points(text: str) -> set[int]:
    """The code points written as CSS escapes in ``text``."""
    return {int(code, 16) for code in ESCAPE.findall(text)}


def private_use(text: str) -> set[int]:
    """The private-use code points (where icon fonts put their glyphs) in ``text``, written
    as escapes or as the characters themselves (the theme's ``--pst-icon-*`` variables)."""
    found = code_points(text) | {ord(ch) for ch in text}
    return {c for c in found if 0xE000 <= c <= 0xF8FF or c >= 0xF0000}


def prune_glyph_rules(css: str, used: set[str]) -> tuple[str, set[int], int]:
    """``(css, kept, dropped)``: the CSS without the glyph rules of unused icons, the code
    points of the rules kept, and how many rules were dropped."""
    kept_codes: set[int] = set()
    dropped = 0

    def keep(match: re.Match) -> str:
        nonlocal dropped
        selectors = [s for s in match["sel"].split(",") if s]
        wanted = [s for s in selectors if s[len(".fa-"):].split(":")[0] in used]
        if not wanted:
            dropped += 1
            return ""
        kept_codes.update(code_points(match["code"]) or {ord(c) for c in match["code"]})
        return ",".join(wanted) + '{content:"' + match["code"] + '"}'

    return GLYPH_RULE.sub(keep, css), kept_codes, dropped


def subset_font(source: Path, target: Path, codes: set[int]) -> None:
    """Write ``source`` (a TrueType font) to ``target`` as a WOFF holding only ``codes``."""
    from fontTools import subset

    options = subset.Options()
    options.flavor = "woff"
    options.layout_features = ["*"]
    font = subset.load_font(str(source), options, dontLoadGlyphNames=True)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(codes | {0x20}))
    subsetter.subset(font)
    subset.save_font(font, str(target), options)


def theme_stylesheet(html: Path) -> Path | None:
    """The theme's stylesheet in the built site ``html``, or None when the build has none
    (a theme other than pydata-sphinx-theme)."""
    sheet = html / "_static" / THEME_CSS
    return sheet if sheet.is_file() else None


def serve_used_icons(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    html = Path(app.outdir)
    sheet = theme_stylesheet(html)
    if sheet is None:
        return
    css = sheet.read_text(encoding="utf-8")
    pruned, codes, dropped = prune_glyph_rules(css, used_icon_names(html))
    # Glyphs drawn by other rules (icon variables, pseudo-elements) in any stylesheet.
    for path in (html / "_static").rglob("*.css"):
        if "mathjax" in path.parts:
            continue
        text = pruned if path == sheet else path.read_text("utf-8", "replace")
        outside = GLYPH_RULE.sub("", text)
        codes |= private_use(outside)
    fonts = 0

    def face(match: re.Match) -> str:
        nonlocal fonts
        rule = match[0]
        found = FONT_URL.search(rule)
        if not found:
            return rule
        webfonts = sheet.parent / Path(found["path"]).parent
        source = (webfonts / f"{found['name']}.ttf").resolve()
        if not source.is_file():
            return rule
        target = source.with_name(f"{found['name']}.site.woff")
        subset_font(source, target, codes)
        fonts += 1
        src = re.search(r"src:[^;}]*", rule)[0]
        return rule.replace(src, f'src:url({found["path"]}.site.woff) format("woff")')

    pruned = FACE.sub(face, pruned)
    sheet.write_text(pruned, encoding="utf-8")
    logger.info(
        f"posenc_site: {dropped} unused icon rules dropped, {fonts} icon fonts cut to "
        f"{len(codes)} glyphs"
    )
