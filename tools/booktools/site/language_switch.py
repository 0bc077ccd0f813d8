"""The language switch: every page of each edition links to the same page of the other.

The English site is ``_build/html``; the Chinese edition is built into its folder
``zh_CN/`` inside it (:mod:`booktools.zh_build`), so one folder deploys both. Each page
gets, at the end of its article header (next to the theme's buttons), a link to its
counterpart, written relative to the page (``../`` up to the site's root, then into or
out of the edition's folder), so it works from ``file://`` and on any host; and a
``<link rel="alternate" hreflang>`` for search engines. The editions and their switch
labels are data (:data:`EDITIONS`); the markup is the template
``_ext/templates/posenc-language-switch.html``.
"""

from __future__ import annotations

from html import escape

from sphinx.application import Sphinx

TEMPLATE = "posenc-language-switch.html"

#: Per edition (Sphinx's ``language``): the other edition's root relative to this
#: edition's root, and how the link to it reads (text, its language, its tooltip).
EDITIONS = {
    "en": {"other_root": "zh_CN/", "text": "中文", "lang": "zh-CN",
           "title": "阅读本页的中文版 (this page in Chinese)"},
    "zh_CN": {"other_root": "../", "text": "English", "lang": "en",
              "title": "Read this page in English (本页英文版)"},
}


def edition(app: Sphinx) -> str:
    """The edition a build makes: ``zh_CN`` or ``en`` (Sphinx's default language)."""
    return app.config.language if app.config.language in EDITIONS else "en"


def counterpart(app: Sphinx, pagename: str) -> str:
    """The URL of ``pagename`` in the other edition, relative to the page itself."""
    up = "../" * pagename.count("/")
    return up + EDITIONS[edition(app)]["other_root"] + app.builder.get_target_uri(pagename)


def add_switch(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Put the switch into the page's article header and name the alternate page."""
    if app.builder.name != "html":
        return
    switch = EDITIONS[edition(app)]
    url = counterpart(app, pagename)
    context["posenc_language_switch"] = {**switch, "url": url}
    items = context.get("theme_article_header_end") or []
    if isinstance(items, str):
        items = [i.strip() for i in items.split(",") if i.strip()]
    if TEMPLATE not in items:
        context["theme_article_header_end"] = [*items, TEMPLATE]
    context["metatags"] = context.get("metatags", "") + (
        f'\n<link rel="alternate" hreflang="{switch["lang"]}" href="{escape(url)}" />')
