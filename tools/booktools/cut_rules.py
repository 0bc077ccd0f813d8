"""Looking up, in a page open in the browser, the selectors of the rules the build cut from
the theme's stylesheet (booktools.site.theme_css, and the unused icons' rules
booktools.site.icons cut): none may match an element of any page, in any state a reader
can put it in. The site crawl (:mod:`booktools.browser`) looks them up on every page, in
each state it takes the page in; tests/test_browser_styles.py says which selectors (the
theme's own, less the served copy's, widened to every element that could take a
transient state).

There are thousands of them (4,852 in the English edition's cut), and one look-up of
them all as a selector list takes about a second on a chapter. A selector can match only
where every class it names outside brackets and parentheses is on some element of the
page; most cut rules name a class no page has (that is why the build cut them). So
:class:`SelectorLookup` asks the page for the classes it has (a few hundred names) and
looks up only the selectors those allow; the rest cannot match there.
"""

from __future__ import annotations

#: Every class name on an element of the page now open; ``null`` for a page in quirks
#: mode, where class selectors match regardless of case (every selector is looked up).
CLASSES = r"""
() => {
  if (document.compatMode !== "CSS1Compat") return null;
  const out = new Set();
  for (const el of document.querySelectorAll("[class]")) for (const c of el.classList) out.add(c);
  return [...out];
}
"""
#: The selectors (of ``selectors``) that the browser cannot read, each with the reason
#: (read against an empty fragment: nothing is matched, only the syntax checked).
UNREADABLE = r"""
(selectors) => {
  const empty = document.createDocumentFragment();
  return selectors.flatMap((s) => {
    try { empty.querySelector(s); return []; }
    catch (e) { return [s + " (unreadable: " + e.name + ")"]; }
  });
}
"""
#: The selectors (of ``selectors``, all readable) that match an element of the page now
#: open. All of them are looked up at once first, as one selector list (which matches
#: where any of them does): in most states none matches, and one look-up says so.
MATCHING = r"""
(selectors) => {
  if (!selectors.length || document.querySelector(selectors.join(", ")) === null) return [];
  return selectors.filter((s) => document.querySelector(s) !== null);
}
"""

_IDENT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def named_classes(selector: str) -> frozenset[str]:
    """The class names ``selector`` requires of some element: each ``.name`` outside
    ``[...]`` (attribute values) and ``(...)`` (the arguments of ``:is()``, ``:not()``,
    ``:has()``, ``:nth-child()`` and the like, which need no class of their own to hold)
    and outside comments. A name written with an escape (``\\``) is left out, as is
    anything the scan cannot read: the set is never larger than what the selector needs,
    so a selector whose classes are not all on a page matches nothing there.

    The build's cut reads selectors with its own function
    (:func:`booktools.site.theme_css.required_classes`); this one is kept apart on
    purpose, so that a misreading there is not repeated by the check of the cut
    (tests/test_browser_styles.py compares it with the browser's own matching).

    >>> sorted(named_classes("div.bd-main > .x:is(.y) [data-v='.z'] a.b\\\\:c"))
    ['bd-main', 'x']
    """
    out: set[str] = set()
    depth, quote, i, n = 0, "", 0, len(selector)
    while i < n:
        ch = selector[i]
        if not quote and selector.startswith("/*", i):  # a comment: nothing it names
            end = selector.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "\\":
            i += 1  # an escaped character: never a class's dot
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(depth - 1, 0)
        elif ch == "." and depth == 0:
            j = i + 1
            while j < n and (selector[j] in _IDENT or ord(selector[j]) > 127):
                j += 1
            name = selector[i + 1:j]
            escaped = j < n and selector[j] == "\\"
            if name and not escaped and not name[0].isdigit() and not name.startswith("--"):
                out.add(name)
            i = j
            continue
        i += 1
    return frozenset(out)


class SelectorLookup:
    """``lookup(page)``: the selectors of ``selectors`` that match an element of the page
    now open in ``page`` (a Playwright page), then those the browser cannot read (each
    with the reason), in ``selectors``' order. Which are unreadable is asked of the
    browser once; on each call only the selectors whose :func:`named_classes` are all on
    the page are looked up (:data:`MATCHING`)."""

    def __init__(self, selectors):
        self.selectors = list(selectors)
        self.needs = [named_classes(s) for s in self.selectors]
        self.unreadable: dict[str, str] | None = None

    def __call__(self, page) -> list[str]:
        if self.unreadable is None:
            found = page.evaluate(UNREADABLE, self.selectors)
            self.unreadable = {line.rsplit(" (unreadable: ", 1)[0]: line for line in found}
        present = page.evaluate(CLASSES)
        present = None if present is None else set(present)
        candidates = [s for s, need in zip(self.selectors, self.needs, strict=True)
                      if s not in self.unreadable and (present is None or need <= present)]
        hits = set(page.evaluate(MATCHING, candidates)) if candidates else set()
        return ([s for s in self.selectors if s in hits]
                + [line for s, line in self.unreadable.items()])
