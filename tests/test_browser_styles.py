"""What the build cut from the site to make its pages lighter changes nothing a reader
sees, checked in a real browser (Debian's Chromium driven by Playwright, as
tests/test_browser.py):

- a code token whose span booktools.site.highlight removed looks exactly as it would
  inside its span, in both themes, on a chapter and on a highlighted source page, and a
  printed output keeps the page's text colour;
- no rule that the build cut from the theme's stylesheet (booktools.site.theme_css, and
  the unused icons' rules booktools.site.icons cut) matches any element of a page: each
  selector of the theme's own stylesheet (as pydata-sphinx-theme ships it) that the
  page's edition's copy lacks, widened to any element that could be hovered, focused or
  the like (:func:`cut_selectors`), is looked up in the page. The site crawl of
  tests/test_browser.py does it on every page it loads, in each state it takes the page
  in (on a phone, at 1280 px in both themes, with the download menu open); here, the
  pages the crawl does not open on a phone, on a phone, and the look-up broken on
  purpose.

Each check is made to fail on purpose. The unit tests of the rules themselves are in
tests/test_site_weight.py.

Without Chromium or Playwright the tests are skipped with a message, except under
``CI=true``, where they fail.
"""

from __future__ import annotations

import doctest
import functools
import importlib.resources
import json
import re

import pytest

from booktools import cut_rules, zh_build
from booktools.axe import SET_THEME
from booktools.browser import DESKTOP, MENU_OPEN, MENU_TOGGLE, PHONE_VIEWPORT
from booktools.cut_rules import SelectorLookup, named_classes
from booktools.site import highlight, theme_css
from booktools.site.icons import THEME_CSS

pytestmark = pytest.mark.slow

#: A chapter's code cells and printed outputs (chapter 1: a light page, quick to load),
#: and a module's highlighted source.
PAGES = ("book/01_why_positions.html", "_modules/posenc/rope.html")
THEMES = ("light", "dark")
#: What a reader sees of a token: how its text is drawn.
LOOKS = ("color", "font-weight", "font-style", "background-color", "text-decoration-line",
         "opacity")

#: For each class, how a span of that class inside the page's first code block looks,
#: and how the block's own text (a text node, as an unwrapped token is) looks: the block's
#: inherited text properties, with nothing drawn behind or on the text itself.
LOOK = r"""
([classes, looks]) => {
  const pre = document.querySelector('div.highlight pre');
  const style = getComputedStyle(pre);
  const bare = {color: style.color, 'font-weight': style.fontWeight,
                'font-style': style.fontStyle, 'background-color': 'rgba(0, 0, 0, 0)',
                'text-decoration-line': 'none', opacity: '1'};
  const out = {bare: looks.map((p) => bare[p]).join(' | ')};
  for (const cls of classes) {
    const span = document.createElement('span');
    span.className = cls;
    span.textContent = 'x';
    pre.appendChild(span);
    const cs = getComputedStyle(span);
    out[cls] = looks.map((p) => cs.getPropertyValue(p)).join(' | ');
    span.remove();
  }
  return out;
}
"""
#: How many spans of the given classes are left inside the page's code blocks.
LEFT = """(classes) => classes.reduce((n, c) =>
  n + document.querySelectorAll('div.highlight pre span.' + CSS.escape(c)).length, 0)"""


@pytest.fixture(scope="module")
def plain(site) -> list[str]:
    _, html = site
    classes = sorted(highlight.site_plain_classes(html / "_static"))
    assert {"n", "p"} <= set(classes), classes  # names and punctuation, the bulk of code
    return classes


def looks(browser, url: str, classes: list[str], extra_css: str = "") -> dict:
    """Per theme, :data:`LOOK` on the page at ``url`` (with ``extra_css`` added), and the
    number of spans of ``classes`` left in its code blocks."""
    page = browser.new_page()
    try:
        page.goto(url, wait_until="load")
        if extra_css:
            page.add_style_tag(content=extra_css)
        out = {"left": page.evaluate(LEFT, classes)}
        for theme in THEMES:
            page.evaluate(SET_THEME, theme)
            out[theme] = page.evaluate(LOOK, [classes, list(LOOKS)])
        return out
    finally:
        page.close()


def differences(seen: dict, classes: list[str]) -> list[str]:
    return [f"{theme}: span.{cls} is drawn as {seen[theme][cls]!r}, the code's own text "
            f"as {seen[theme]['bare']!r}"
            for theme in THEMES for cls in classes if seen[theme][cls] != seen[theme]["bare"]]


#: The colour of a printed output's text, and of a ``pre`` the theme draws with no rule
#: of the site's (added to the article), per theme.
OUTPUT_COLOUR = r"""
() => {
  const output = document.querySelector('div.output div.highlight pre');
  const bare = document.createElement('pre');
  document.querySelector('article').appendChild(bare);
  const out = [getComputedStyle(output).color, getComputedStyle(bare).color];
  bare.remove();
  return out;
}
"""


def output_colours(browser, url: str, extra_css: str = "") -> dict[str, list[str]]:
    page = browser.new_page()
    try:
        page.goto(url, wait_until="load")
        if extra_css:
            page.add_style_tag(content=extra_css)
        colours = {}
        for theme in THEMES:
            page.evaluate(SET_THEME, theme)
            colours[theme] = page.evaluate(OUTPUT_COLOUR)
        return colours
    finally:
        page.close()


def test_printed_outputs_keep_the_pages_text_colour(site, browser):
    base, _ = site
    colours = output_colours(browser, base + PAGES[0])
    assert all(output == bare for output, bare in colours.values()), colours
    # on purpose: the code style's colour given to outputs too is caught
    broken = output_colours(browser, base + PAGES[0],
                            "div.highlight pre { color: inherit !important; }")
    assert any(output != bare for output, bare in broken.values()), broken


@pytest.mark.parametrize("path", PAGES)
def test_an_unwrapped_token_looks_as_it_did(site, browser, plain, path):
    base, _ = site
    seen = looks(browser, base + path, plain)
    assert seen["left"] == 0, f"{seen['left']} spans of {plain} left in {path}'s code"
    assert not differences(seen, plain)


def test_self_test_the_look_check_sees_a_difference(site, browser, plain):
    base, _ = site
    # a keyword is drawn in a style of its own: the check tells it from plain text
    assert differences(looks(browser, base + PAGES[0], ["k"]), ["k"])
    # on purpose: code text in the page's colour, as the theme's rule for every pre had
    # it before the site's CSS gave code blocks the code style's colour
    broken = "div.highlight pre { color: rgb(34, 40, 50) !important; }"
    assert differences(looks(browser, base + PAGES[0], plain, broken), plain)


# ------------------------------------------------------ the theme's stylesheet, cut ----

#: The check of every page is the crawl's (tests/test_browser.py, test_no_rule_cut_from_the_
#: theme_stylesheet_matches_a_page): it looks the cut selectors up in each state it takes a
#: page in (booktools.browser.CUT_STATES). Here: pages of the kinds the crawl does not open
#: on a phone (a module's highlighted source, the index and search page of each edition),
#: on a phone;
#: and the look-up itself, broken on purpose.
NOT_ON_A_PHONE = ("_modules/posenc/rope.html", "genindex.html", "search.html",
                  "zh_CN/genindex.html", "zh_CN/search.html")
#: The chapter the self-test breaks the stylesheet under.
CHAPTER = "book/02_sinusoidal.html"
#: ``(name, viewport, theme, open the download menu)``: states :func:`matching` takes a
#: page in, in the order given, on one load (a menu opened stays open after).
STATES = (("1280 px, light", DESKTOP, "light", False),
          ("1280 px, dark", DESKTOP, "dark", False),
          ("1280 px, dark, download menu open", DESKTOP, "dark", True),
          ("phone, light", PHONE_VIEWPORT, "light", False))
#: A pseudo-element, or a pseudo-class that holds only while a reader interacts with an
#: element (or that a page's state may change): widened away (:func:`widen`), so the
#: selector matches every element that could ever be in that state (a superset).
_TRANSIENT = re.compile(
    r"::?(?:before|after|placeholder|selection|marker|backdrop|file-selector-button|"
    r"first-letter|first-line|-webkit-[\w-]+|-moz-[\w-]+|-ms-[\w-]+)(?![\w-])|"
    r":(?:hover|focus|focus-visible|focus-within|active|visited|link|checked|disabled|"
    r"enabled|indeterminate|invalid|valid|required|optional|read-only|read-write|target|"
    r"placeholder-shown|autofill|default|empty|defined)(?![\w-])")


def rule_selectors(css: str) -> set[str]:
    """Every selector of every style rule in ``css``, ``@media`` blocks included."""
    out: set[str] = set()
    for prelude, body in theme_css._blocks(css):
        if body is None:
            continue
        if prelude.startswith(theme_css.NESTING):
            out |= rule_selectors(body)
        elif not prelude.startswith("@"):
            out.update(sel.strip() for sel in theme_css._split_top(prelude, ","))
    return out


def removed_selectors(whole: str, served: str) -> list[str]:
    """The selectors of the theme's own stylesheet that the served one no longer has,
    each widened to every element that could ever take that state (:data:`_TRANSIENT`)."""
    gone = rule_selectors(whole) - rule_selectors(served)
    return sorted({widen(sel) for sel in gone})


def widen(selector: str) -> str:
    """``selector`` matching every element that could ever match it: each ``:not(...)``,
    pseudo-element and :data:`_TRANSIENT` pseudo-class becomes ``:is(*)``, which holds
    anywhere in a compound selector and matches any element."""
    out, i = [], 0
    while i < len(selector):
        if selector.startswith(":not(", i):
            depth, j = 1, i + 5
            while j < len(selector) and depth:
                depth += {"(": 1, ")": -1}.get(selector[j], 0)
                j += 1
            out.append(":is(*)")
            i = j
        else:
            out.append(selector[i])
            i += 1
    return _TRANSIENT.sub(":is(*)", "".join(out)).strip()


def test_named_classes_are_only_what_a_selector_needs():
    """The classes a cut selector is looked up for (booktools.cut_rules): never one it
    could match without, so skipping it where a class is missing skips only what cannot
    match."""
    assert named_classes("div.bd-main > .x.y a") == {"bd-main", "x", "y"}
    # arguments of pseudo-classes, attribute values, escapes: not required
    assert named_classes(".a:is(.b, .c) :not(.d) .e:has(> .f)") == {"a", "e"}
    assert named_classes("[data-v='.z'] a[href$=\".pdf\"]") == set()
    assert named_classes(".sm\\:flex .ok") == {"ok"}
    assert named_classes(".a\\.b") == set()
    assert named_classes("a:nth-child(2.5) .näme") == {"näme"}
    assert named_classes("*") == named_classes("") == set()
    assert named_classes("a/* .x */.b") == {"b"}  # a comment names nothing
    assert doctest.testmod(cut_rules).failed == 0


def test_the_class_filter_skips_no_selector_the_browser_matches(site, browser):
    """The crawl looks up only the cut selectors whose classes are all on the page
    (booktools.cut_rules.SelectorLookup). Every selector of the theme's own stylesheet
    (widened; hundreds match a chapter), looked up by the browser with no filter, and
    through the filter: the same matches. (A filter that also required the classes inside
    parentheses misses one.) The filter is cut_rules' own reading of a selector, not the
    build's (theme_css.required_classes), so a mistake in the build's cut is not
    repeated by the check of it."""
    base, _ = site
    every = sorted({widen(s) for s in rule_selectors(theme_stylesheet())})
    page = browser.new_page()
    try:
        page.goto(base + CHAPTER, wait_until="load")
        unreadable = page.evaluate(cut_rules.UNREADABLE, every)
        assert not unreadable, unreadable
        unfiltered = page.evaluate(cut_rules.MATCHING, every)
        filtered = SelectorLookup(every)(page)
    finally:
        page.close()
    assert len(unfiltered) > 100, unfiltered
    assert filtered == unfiltered


def matching(browser, url: str, selectors: list[str], states=STATES) -> dict[str, list]:
    """Per state of ``states`` (taken in turn on one load of the page at ``url``), the
    selectors of ``selectors`` that match an element of the page, or that the browser
    cannot read (booktools.cut_rules.SelectorLookup, as the crawl looks them up)."""
    page = browser.new_page()
    found = {}
    lookup = SelectorLookup(selectors)
    try:
        page.goto(url, wait_until="load")
        for name, viewport, theme, menu in states:
            page.set_viewport_size(viewport)
            page.evaluate(SET_THEME, theme)
            toggle = page.locator(MENU_TOGGLE)
            if menu and toggle.count():  # the pages with a download menu
                toggle.first.click()
                page.wait_for_selector(MENU_OPEN)
            if hits := lookup(page):
                found[name] = hits
        return found
    finally:
        page.close()


def edition_sheet(html, path: str):
    """The theme's stylesheet the page at ``path`` links: its edition's copy."""
    edition = html / zh_build.FOLDER if path.startswith(zh_build.FOLDER + "/") else html
    return edition / "_static" / THEME_CSS


def cut_selectors(html):
    """``path -> selectors``: for a page of the site in ``html``, the selectors its
    edition's build removed from the theme's own stylesheet (theme_css, and the unused
    icons' rules that booktools.site.icons removed), widened (:func:`removed_selectors`):
    what must match no element of that page. A stylesheet that was not cut at all fails
    the test that asks."""
    whole = theme_stylesheet()

    @functools.cache
    def removed(sheet) -> tuple[str, ...]:
        served_sheet = sheet.read_text(encoding="utf-8")
        assert len(served_sheet) < 0.6 * len(whole), f"{sheet} was not cut"
        return tuple(removed_selectors(whole, served_sheet))

    return lambda path: removed(edition_sheet(html, path))


def theme_stylesheet() -> str:
    """The theme's stylesheet as pydata-sphinx-theme ships it."""
    package = importlib.resources.files("pydata_sphinx_theme")
    return (package / "theme" / "pydata_sphinx_theme" / "static" / THEME_CSS).read_text(
        encoding="utf-8")


@pytest.mark.parametrize("path", NOT_ON_A_PHONE)
def test_no_rule_cut_from_the_theme_stylesheet_matches_the_page_on_a_phone(site, browser,
                                                                          path):
    base, html = site
    problems = matching(browser, base + path, list(cut_selectors(html)(path)), STATES[3:])
    assert not problems, json.dumps(problems, indent=1)


def test_self_test_the_cut_check_sees_a_rule_a_page_uses(site, browser):
    base, html = site
    served_sheet = (html / "_static" / THEME_CSS).read_text(encoding="utf-8")
    # on purpose: a stylesheet without the rule for the article's column (on every page),
    # and the theme's own with a rule for a cross-reference while hovered, which the
    # served one lacks
    column = ".bd-main .bd-content .bd-article-container"
    assert served_sheet.count("}" + column + "{") == 1  # the whole rule, not a longer one
    broken = served_sheet.replace("}" + column + "{", "}.never-on-a-page{")
    gone = removed_selectors(served_sheet + "a.reference:hover::after{color:red}", broken)
    assert gone == [column, "a.reference:is(*):is(*)"]
    assert matching(browser, base + CHAPTER, gone, STATES[:1]) == {
        STATES[0][0]: gone}
    # one unreadable selector among them: still reported, and the others looked up
    assert matching(browser, base + CHAPTER, [*gone, "a:unknown-state"],
                    STATES[:1]) == {STATES[0][0]: [
                        *gone, "a:unknown-state (unreadable: SyntaxError)"]}
    assert widen(".f>:not(:placeholder-shown)~label") == ".f>:is(*)~label"
