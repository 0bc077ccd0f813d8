"""Strings the site itself writes (not the book's messages), in the edition's language.

The theme's own strings (search box, navigation, buttons) come from its bundled
translations once ``language`` is set. Two kinds do not: myst-nb's prompt of a hidden
code cell, whose ``{type}`` it fills with an English word after the config's prompt
(``显示{type}``, :data:`booktools.zh_build.THEME_STRINGS`) is read, and the label of the
book-source download button (:mod:`booktools.site.source`). Both are data here
(:data:`STRINGS`), per language; English builds are left alone.
"""

from __future__ import annotations

from sphinx.application import Sphinx

#: Per language: the words myst-nb puts for ``{type}`` → the translation, and the
#: source button's text and tooltip.
STRINGS = {
    "zh_CN": {
        "prompt types": {"content": "代码单元", "source": "代码", "outputs": "输出",
                         "output": "输出"},
        "source button": ("本书源码",
                          "下载本书源码：构建本站时的仓库版本（posenc、requirements.txt、notebook）"),
    },
}


def translate_prompts(app: Sphinx, doctree, docname: str) -> None:
    """Put the ``{type}`` word of every hidden-cell prompt into the build's language."""
    words = STRINGS.get(app.config.language, {}).get("prompt types")
    if not words:
        return
    from myst_nb.sphinx_ import HideCodeCellNode

    for node in doctree.findall(HideCodeCellNode):
        for key in ("prompt_show", "prompt_hide"):
            for english, word in words.items():
                if node[key].endswith(english):
                    node[key] = node[key][: -len(english)] + word
                    break


def translate_buttons(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The book-source download button's label in the build's language."""
    strings = STRINGS.get(app.config.language, {}).get("source button")
    if not strings:
        return
    for group in context.get("header_buttons") or []:
        for button in group.get("buttons", []):
            if button.get("label") == "download-book-source-button":
                button["text"], button["tooltip"] = strings
