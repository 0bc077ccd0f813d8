"""Strings the site itself writes (not the book's messages), in the edition's language.

Most of the theme's strings (navigation, buttons, the search page) come from its bundled
translations once ``language`` is set. Four kinds do not: the captions of the book's
parts in the sidebar (``_toc.yml``'s, put in by sphinx-external-toc where gettext does
not see them); myst-nb's prompt of a hidden
code cell, whose ``{type}`` it fills with an English word after the config's prompt
(``显示{type}``, :data:`booktools.zh_build.THEME_STRINGS`) is read; the label of the
book-source download button (:mod:`booktools.site.source`); and the tooltips and
accessible names the templates write in English whatever the language (the sidebar
toggles, the colour-mode button, the heading links, the copyright line, the names
:mod:`booktools.site.pages` gives), which are replaced in the written pages. All are data
here (:data:`STRINGS`), per language; English builds are left alone.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx

#: Per language: the words myst-nb puts for ``{type}`` → the translation, and the
#: source button's text and tooltip.
STRINGS = {
    "zh_CN": {
        "prompt types": {"content": "代码单元", "source": "代码", "outputs": "输出",
                         "output": "输出"},
        "source button": ("本书源码",
                          "下载本书源码：构建本站时的仓库版本（posenc、requirements.txt、notebook）"),
        # the book's parts, the captions of _toc.yml (Sphinx's gettext does not see the
        # toctrees sphinx-external-toc inserts): English caption → its translation
        "toc captions": {
            "Foundations": "基础",
            "Absolute encodings": "绝对位置编码",
            "Rotary": "旋转位置编码",
            "Long context": "长上下文",
            "Relative biases": "相对位置偏置",
            "Comparison": "对比",
            "Beyond one dimension": "超越单轴",
            "Pitfalls": "陷阱",
            "Back matter": "附录",
        },
        # exact text in the written pages → its translation
        "page strings": {
            'title="Link to this heading"': 'title="链接到此标题"',
            'title="Link to this definition"': 'title="链接到此定义"',
            'title="Link to this equation"': 'title="链接到此公式"',
            'title="Link to this table"': 'title="链接到此表格"',
            'title="Link to this image"': 'title="链接到此图片"',
            'title="Link to this code"': 'title="链接到此代码"',
            'title="Toggle primary sidebar"': 'title="显示或隐藏左侧导航栏"',
            'title="Toggle secondary sidebar"': 'title="显示或隐藏本页目录"',
            'title="System Settings"': 'title="跟随系统设置"',
            'title="Light"': 'title="浅色"',
            'title="Dark"': 'title="深色"',
            'aria-label="Color mode"': 'aria-label="颜色模式"',
            'data-bs-title="Color mode"': 'data-bs-title="颜色模式"',
            'aria-label="Toggle hidden content"': 'aria-label="显示或隐藏内容"',
            'aria-label="Main"': 'aria-label="主导航"',
            'aria-label="Page"': 'aria-label="本页目录"',
            'aria-label="Sub-pages of ': 'aria-label="子页面：',
            "© Copyright ": "© 版权所有 ",
        },
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


def translate_captions(app: Sphinx, doctree) -> None:
    """The captions of the book's parts (the toctrees of _toc.yml) in the build's language."""
    captions = STRINGS.get(app.config.language, {}).get("toc captions")
    if not captions:
        return
    from sphinx import addnodes

    for toctree in doctree.findall(addnodes.toctree):
        caption = toctree.get("caption")
        if caption in captions:
            toctree["caption"] = captions[caption]


def translate_buttons(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The book-source download button's label in the build's language."""
    strings = STRINGS.get(app.config.language, {}).get("source button")
    if not strings:
        return
    for group in context.get("header_buttons") or []:
        for button in group.get("buttons", []):
            if button.get("label") == "download-book-source-button":
                button["text"], button["tooltip"] = strings


def translate_pages(app: Sphinx, exception) -> None:
    """Replace the English strings of :data:`STRINGS` in every page written."""
    strings = STRINGS.get(app.config.language, {}).get("page strings")
    if exception is not None or not strings or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = text
        for english, translated in strings.items():
            new = new.replace(english, translated)
        if new != text:
            page.write_text(new, encoding="utf-8")
