"""axe-core's runs on a page of the crawl (:mod:`booktools.browser`): which rules, in
which themes, and the style signatures that let the two colour rules check each style
once per theme rather than each of its repeats (:data:`AXE_RUNS`).

* :func:`axe_script`: axe-core's script, as the pinned ``axe-playwright-python`` ships it;
* :func:`axe_violations`: the three runs on the page now open, one line per violation;
* :data:`SET_THEME`: the page put in a theme as the theme's own toggle does (the colour
  runs, and tests/test_browser_styles.py).
"""

from __future__ import annotations

import functools

#: axe-core's rules for WCAG 2.0 and 2.1, levels A and AA (axe's own tag names).
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
#: Options for ``axe.run`` on every page. No rule is disabled. ``preload: false`` keeps
#: axe from fetching the stylesheets itself: its CSSOM preload resolves the theme's
#: ``@import "../basic.css"`` against the page's URL instead of the stylesheet's, so it
#: requests ``book/basic.css`` (a 404 the crawl would report against the site). The one
#: rule that needs that preload, ``css-orientation-lock`` (WCAG 1.3.4), then has nothing
#: to read; test_no_stylesheet_locks_the_orientation checks the same thing (no
#: ``orientation`` media query in any stylesheet the site serves) on the files.
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": WCAG_TAGS},
    "resultTypes": ["violations"],
    "preload": False,
}
#: Heading order and landmarks: axe files these under "best-practice", not under a WCAG
#: tag, so they are named here. All of them run, except ``region`` (all content inside
#: some landmark): sphinx-book-theme's template puts the book's title link at the top of
#: the sidebar outside its ``<nav>``, and this project does not override theme templates;
#: the same link is the first entry of the navigation, which is a landmark.
STRUCTURE_RULES = (
    "heading-order", "empty-heading", "page-has-heading-one", "landmark-one-main",
    "landmark-unique", "landmark-no-duplicate-banner", "landmark-no-duplicate-contentinfo",
    "landmark-no-duplicate-main", "landmark-main-is-top-level",
    "landmark-banner-is-top-level", "landmark-contentinfo-is-top-level",
    "landmark-complementary-is-top-level",
)
#: Each page is checked in three runs of axe (one injection): every WCAG rule but the two
#: that read the theme's colours, and the heading and landmark rules (named with
#: ``enabled: true``, which axe honours over the tag filter), on the whole page; then the
#: two colour rules, ``color-contrast`` (text against its background) and
#: ``link-in-text-block`` (a link in running text told apart from the text around it by
#: more than its colour), by far the slowest rules, in the light theme, and again in the
#: dark theme.
#:
#: The colour runs check each *style* once per theme, not each of its thousands of
#: repeats: what these rules find is a function of the style alone, so a second element
#: with the same style adds no check. Before each colour run :data:`MARK_SEEN_STYLES`
#: computes (:data:`STYLE_SIGNATURES`):
#:
#: * for every visible element that holds text of its own, a signature of everything the
#:   contrast rule reads: the text's colour, size (as the rule reads it: large text or
#:   not, by axe's own thresholds; the exact size where the text has a shadow or a
#:   stroke, whose reach the rule measures in ems of the size, or a size of 0, which the
#:   rule does not check), weight, shadow, fill and stroke, and,
#:   for the element and each ancestor up to the first opaque static one, its background
#:   colour and image, position, opacity, blend mode and filters (a layer that paints
#:   nothing and changes nothing under it, with all of these at their defaults, an HTML
#:   element that is not a graphic and has no ``::before`` or ``::after``, is left out:
#:   the same text on the same layers nested one wrapper deeper is the same style);
#: * for every link (``a[href]``, ``[role=link]``), a signature of everything the link rule
#:   reads of the link, of each inline element between it and the block around it, and of
#:   that block: colours, background, borders and outline, font, decoration, opacity,
#:   display, the content of ``::before`` and ``::after``, and what is behind the link and
#:   the block (as above).
#:
#: The run checks the elements that hold something new (``data-axe-new``: the first
#: element of each new text signature, each new link) with what lies inside them, less
#: the parts inside them where nothing is new (``data-axe-seen``); axe's cost is per
#: element it checks (on a Chinese chapter, 0.85 s for 86 links, 0.1 s for one). The
#: elements around a new one are left out like repeats, on their own signatures. A part
#: of the page is marked ``data-axe-seen`` only when nothing inside it is new in that
#: theme: no text signature that no earlier element of the crawl, on this page or an
#: earlier one, has
#: shown, and no link whose signature no earlier link *that axe's
#: link rule evaluated and decided* has shown (axe's checks are wrapped to record the links
#: they evaluate and what they answer: whether the rule applies to a link depends on the
#: text around it, and whether axe can decide on its place on the page, neither on its
#: style; a link axe could not decide, e.g. one a box overlaps, is not reported, and does
#: not count as checked). A link the rule does not apply to (a block or inline-block
#: link, a link without text, a link not in running text by axe's own
#: ``isInTextBlock``) is not new. Every page and
#: every rule still run; a style first met on page 30 is checked on page 30. The two runs
#: also leave out MathJax's assistive MathML (``mjx-assistive-mml``): that copy of each
#: formula is clipped to one pixel for screen readers only, so it has no visible text and
#: no link these rules could fail; every other rule reads it.
#: (test_the_contrast_check_reads_styles_not_elements makes the dedupe miss nothing it
#: should catch.)
SEEN_STYLE = "data-axe-seen"
NEW_STYLE = "data-axe-new"
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
CONTRAST_CONTEXT = {"include": [[f"[{NEW_STYLE}]"]],
                    "exclude": [["mjx-assistive-mml"], [f"[{SEEN_STYLE}]"]]}
CONTRAST = {**AXE_OPTIONS, "runOnly": {"type": "rule", "values": COLOUR_RULES}}
#: ``kind: (context, options, theme)``; ``theme`` is ``None`` for the runs that read no
#: colour (they see the page as loaded), else the theme the run switches to first and
#: whose styles it dedupes.
AXE_RUNS = {
    "axe": (None, {**AXE_OPTIONS, "rules": {
        **{rule: {"enabled": False} for rule in COLOUR_RULES},
        **{rule: {"enabled": True} for rule in STRUCTURE_RULES}}}, None),
    "axe, contrast": (CONTRAST_CONTEXT, CONTRAST, "light"),
    "axe, dark theme": (CONTRAST_CONTEXT, CONTRAST, "dark"),
}


# Runs axe-core (injected just before) with a context and options and returns its
# violations, one line per element.
AXE_RUN = r"""
async ([context, options]) => {
  const result = await axe.run(context || document, options);
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => n.target.join(" ") + " " + n.html.slice(0, 160)),
  }));
}
"""

# Puts the page in a theme the way the theme's own toggle does (``data-mode`` and
# ``data-theme`` on <html>) and waits until the colours have settled. The theme animates
# its colours on a switch; transitions are turned off first (a style sheet added to the
# page, which changes no colour at rest), so the colours settle in the next frame instead
# of after each transition's duration; then, if the theme changed, two frames; and any
# animation still running.
SET_THEME = r"""
async (theme) => {
  const html = document.documentElement;
  if (!document.getElementById("posenc-no-transitions")) {
    const style = document.createElement("style");
    style.id = "posenc-no-transitions";
    style.textContent = "*, *::before, *::after { transition: none !important; }";
    document.head.appendChild(style);
  }
  if (html.dataset.theme !== theme) {
    html.dataset.mode = theme;
    html.dataset.theme = theme;
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  }
  await Promise.all(document.getAnimations().map((a) => a.finished.catch(() => null)));
}
"""


# Installed on a page with axe-core (once): ``window.posencStyles``, the style signatures
# of AXE_RUNS' comment. Wraps axe's two link-in-text-block checks (the rule's checks, run
# on every link the rule applies to) so that they record the links they evaluate, and
# changes nothing else of axe. ``mark(seen, seenLinks, attr, newAttr)`` marks with
# ``newAttr`` each element holding a new text signature or link (the next colour run's
# include), and with ``attr`` each element that the run can leave out: one whose subtree shows
# no text signature outside ``seen`` and no link the rule may apply to whose signature is
# outside ``seenLinks``; it removes the marks of an earlier run first and returns the text
# signatures met for the first time and the number of new links. ``evaluatedLinks()``
# returns the signatures of the links the rule evaluated since the last call and settled
# (passed or failed; not those axe could not decide).
STYLE_SIGNATURES = r"""
() => {
  if (window.posencStyles) return;
  const LINK = "a[href], [role=link]";
  // the display values axe's link checks stop at (the block around a link), and those
  // of a link the rule does not apply to (axe-core 4.12, isInTextBlock and its callers)
  const BLOCK = ["block", "list-item", "table", "flex", "grid", "inline-block"];
  const TEXT_BLOCK = ["block", "list-item", "table", "flex", "grid"];
  // the options of axe's contrast check that class a text as large
  const CONTRAST = axe._audit.checks["color-contrast"].options;
  for (const key of ["boldValue", "boldTextPt", "largeTextPt"]) {
    if (typeof CONTRAST[key] !== "number") throw new Error(`axe's color-contrast has no ${key}`);
  }
  const NOT_INLINE = [...TEXT_BLOCK, "inline-block", "inline-flex", "inline-grid"];
  const PROPS = ["display", "color", "-webkit-text-fill-color",
    "-webkit-text-stroke-width", "-webkit-text-stroke-color",
    "text-shadow", "opacity", "background-color", "background-image",
    "border-bottom-style", "border-bottom-width", "border-bottom-color",
    "border-top-style", "border-top-width", "border-top-color", "outline-style",
    "outline-width", "outline-color", "font-family", "font-size", "font-weight",
    "font-style", "text-decoration", "text-decoration-line", "text-decoration-style"];
  // what each of the rule's two checks answered for each link it evaluated: true
  // (passes), false (fails) or undefined (axe cannot tell, e.g. where something overlaps
  // the link: a matter of its place on the page, not of its style)
  let evaluated = new Map();
  for (const id of ["link-in-text-block", "link-in-text-block-style"]) {
    const check = axe._audit.checks[id];
    const evaluate = check.evaluate;
    check.evaluate = function (node, ...rest) {
      const answer = evaluate.call(this, node, ...rest);
      if (!evaluated.has(node)) evaluated.set(node, {});
      evaluated.get(node)[id] = answer;
      return answer;
    };
  }
  // the rule's verdict is settled (either check passes, or both fail): what any link of
  // the same style would get; an undecided link does not count as checked
  const settled = (answers) => Object.values(answers).includes(true)
      || (Object.keys(answers).length === 2 && Object.values(answers).every((a) => a === false));
  // the signatures of one state of the page (styles read once each)
  const signatures = () => {
    const style = new Map(), layers = new Map(), links = new Map();
    const cs = (el) => {
      let s = style.get(el);
      if (!s) { s = getComputedStyle(el); style.set(el, s); }
      return s;
    };
    const opaque = (s) => {
      const m = s.backgroundColor.match(/^rgba?\(([^)]*)\)$/);
      const alpha = m && m[1].split(",").length === 4 ? parseFloat(m[1].split(",")[3]) : 1;
      return m && alpha === 1 && s.backgroundImage === "none" && s.position === "static";
    };
    // a layer that paints nothing and changes nothing under it: no background colour or
    // image, static, fully opaque, no blend mode, no filter (its signature would be only
    // these defaults: it tells nothing but how deep the text is nested); and an HTML
    // element that axe does not take for an image in the background (svg, img, canvas,
    // object, iframe, video), with no ::before or ::after (which axe reads on every
    // element behind the text)
    const GRAPHIC = ["svg", "img", "canvas", "object", "iframe", "video"];
    const XHTML = "http://www.w3.org/1999/xhtml";
    const clear = (el, s) => s.backgroundColor === "rgba(0, 0, 0, 0)"
        && s.backgroundImage === "none" && s.position === "static" && s.opacity === "1"
        && s.mixBlendMode === "normal" && s.filter === "none" && s.backdropFilter === "none"
        && el.namespaceURI === XHTML && !GRAPHIC.includes(el.localName)
        && ["::before", "::after"].every(
            (p) => ["none", "normal"].includes(getComputedStyle(el, p).content));
    const behind = (el) => {
      if (!el || el.nodeType !== 1) return "";
      let l = layers.get(el);
      if (l === undefined) {
        const s = cs(el);
        if (clear(el, s)) {
          l = behind(el.parentElement);
        } else {
          l = [s.backgroundColor, s.backgroundImage, s.position, s.opacity, s.mixBlendMode,
               s.filter, s.backdropFilter].join(" ");
          if (!opaque(s)) l += " / " + behind(el.parentElement);
        }
        layers.set(el, l);
      }
      return l;
    };
    // the text's size as the contrast rule reads it (axe-core 4.12's color-contrast
    // evaluate): only to class the text as large (3:1) or not (4.5:1), with the check's
    // own options; the exact size counts where the rule reads more of it: a text shadow
    // or stroke (whose reach the rule measures in ems of the size), or no size at all
    // (text the rule does not check)
    const size = (s) => {
      if (s.textShadow !== "none" || parseFloat(s.webkitTextStrokeWidth) !== 0
          || !(parseFloat(s.fontSize) > 0)) return s.fontSize;
      const bold = parseFloat(s.fontWeight) >= CONTRAST.boldValue || s.fontWeight === "bold";
      const pt = Math.ceil(72 * parseFloat(s.fontSize)) / 96;
      return pt >= (bold ? CONTRAST.boldTextPt : CONTRAST.largeTextPt) ? "large" : "normal";
    };
    const text = (el) => {
      const s = cs(el);
      return [s.color, size(s), s.fontWeight, s.textShadow, s.webkitTextFillColor,
              s.webkitTextStrokeWidth, s.webkitTextStrokeColor, behind(el)].join("|");
    };
    const display = (el) => cs(el).display;
    const within = (el, kinds) => kinds.includes(display(el))
        || display(el).startsWith("table-");
    const part = (el) => PROPS.map((p) => cs(el).getPropertyValue(p)).join(" ") + " "
        + ["::before", "::after"].map((p) => getComputedStyle(el, p).content).join(" ");
    const link = (el) => {
      let sig = links.get(el);
      if (sig === undefined) {
        const chain = [part(el)];
        let up = el.parentElement;
        while (up && !within(up, BLOCK)) { chain.push(part(up)); up = up.parentElement; }
        sig = chain.join(" > ") + " / " + behind(el)
            + (up ? " in " + part(up) + " / " + behind(up) : "");
        links.set(el, sig);
      }
      return sig;
    };
    // the rule surely does not apply: a link laid out as a block, or without text, or
    // not in running text by axe's own test (isInTextBlock, which reads the block around
    // the link: axe's tree of that block is built for it, and torn down by the caller)
    const inText = (el) => {
      let block = el.parentElement;
      while (block && !within(block, TEXT_BLOCK)) block = block.parentElement;
      if (!block) return true;
      axe.utils.getFlattenedTree(block);
      return axe.commons.dom.isInTextBlock(el);
    };
    const notInText = (el) => within(el, NOT_INLINE) || !el.innerText.trim() || !inText(el);
    return {cs, text, link, inText, notInText};
  };
  const ownText = (el) => {
    for (const n of el.childNodes) if (n.nodeType === 3 && n.textContent.trim()) return true;
    return false;
  };
  window.posencStyles = {
    mark(seen, seenLinks, attr, newAttr) {
      const known = new Set(seen), knownLinks = new Set(seenLinks), fresh = [], news = [];
      let links = 0;
      for (const a of [attr, newAttr]) {
        document.querySelectorAll(`[${a}]`).forEach((e) => e.removeAttribute(a));
      }
      const sig = signatures();
      const all = new Map();
      const walk = (el) => {
        let repeat = true;
        for (const child of el.children) if (!walk(child)) repeat = false;
        let own = false;
        if (ownText(el) && el.getClientRects().length
            && sig.cs(el).visibility === "visible") {
          const t = sig.text(el);
          if (!known.has(t)) { known.add(t); fresh.push(t); own = true; }
        }
        if (el.matches(LINK) && !knownLinks.has(sig.link(el)) && !sig.notInText(el)) {
          links += 1;
          own = true;
        }
        if (own) { news.push(el); repeat = false; }
        all.set(el, repeat);
        return repeat;
      };
      walk(document.body);
      axe.teardown();
      for (const [el, repeat] of all) {
        if (repeat && !all.get(el.parentElement)) el.setAttribute(attr, "");
      }
      for (const el of news) el.setAttribute(newAttr, "");
      return {fresh: fresh, links: links};
    },
    inTextBlock(el) {  // the test above alone (tests compare it with axe's own tree's)
      const found = signatures().inText(el);
      axe.teardown();
      return found;
    },
    evaluatedLinks() {
      const sig = signatures();
      const out = [...new Set([...evaluated].filter(([, answers]) => settled(answers))
          .map(([el]) => sig.link(el)))];
      evaluated = new Map();
      return out;
    },
  };
}
"""
MARK_SEEN_STYLES = """([seen, seenLinks, attr, newAttr]) =>
    posencStyles.mark(seen, seenLinks, attr, newAttr)"""
EVALUATED_LINKS = """() => posencStyles.evaluatedLinks()"""


class MissingAxe(RuntimeError):
    """axe-core's script is not installed (``axe-playwright-python``, a Python requirement)."""


@functools.cache
def axe_script() -> str:
    """axe-core's ``axe.min.js``, as shipped by the pinned ``axe-playwright-python``.

    Raises:
        MissingAxe: the package is not installed.
    """
    try:
        from axe_playwright_python.base import AXE_SCRIPT
    except ImportError as err:
        raise MissingAxe("axe-playwright-python is not installed "
                         "(pip install -r requirements.txt)") from err
    return AXE_SCRIPT


def axe_violations(page, seen_styles: dict[str, set[str]],
                   leave_out: tuple[str, ...] = (), on_theme=None) -> dict[str, list[str]]:
    """axe-core's WCAG 2.1 A/AA violations on the page now open, per run of
    :data:`AXE_RUNS`, one line per rule (the page is left in the dark theme).

    ``seen_styles``: per theme, the text-style signatures whose contrast earlier pages
    (or earlier elements) checked, and (under ``"<theme>, links"``) the signatures of the
    links axe's link rule evaluated and decided; what this page's colour runs check is
    added to it
    (:data:`AXE_RUNS`). ``leave_out``: CSS selectors of content every run leaves out, because
    another page of the crawl holds it byte for byte and its runs check it there.
    ``on_theme(theme)``: called once the page is in each colour run's theme, before the
    run reads it (the crawl looks up the selectors cut from the theme's stylesheet there).
    """
    page.evaluate(axe_script())
    page.evaluate(STYLE_SIGNATURES)
    found = {}
    for kind, (context, options, theme) in AXE_RUNS.items():
        if theme is not None:
            page.evaluate(SET_THEME, theme)
            if on_theme is not None:
                on_theme(theme)
            seen = seen_styles.setdefault(theme, set())
            links = seen_styles.setdefault(f"{theme}, links", set())
            new = page.evaluate(MARK_SEEN_STYLES,
                                [sorted(seen), sorted(links), SEEN_STYLE, NEW_STYLE])
            seen.update(new["fresh"])
            if not new["fresh"] and not new["links"]:  # every style here was checked
                found[kind] = []  # before: nothing is marked new, and axe refuses a run
                continue  # whose include matches nothing
        found[kind] = [
            f"{v['id']} ({v['impact']}): {v['help']}; " + " | ".join(v["nodes"][:5])
            + (f" | ... {len(v['nodes']) - 5} more" if len(v["nodes"]) > 5 else "")
            for v in page.evaluate(AXE_RUN, [_without(context, leave_out), options])
        ]
        if theme is not None:
            links.update(page.evaluate(EVALUATED_LINKS))
    return found


def _without(context: dict | None, leave_out: tuple[str, ...]) -> dict | None:
    if not leave_out:
        return context
    exclude = [[selector] for selector in leave_out]
    if context is None:
        return {"exclude": exclude}
    return {**context, "exclude": [*context.get("exclude", []), *exclude]}
