"""Local Sphinx extension: the two editions (English, Chinese) of the site, connected
here and kept in :mod:`booktools.site`, one module per job.

- the language switch on every page, to the same page of the other edition:
  :mod:`booktools.site.language_switch` (template ``templates/posenc-language-switch.html``);
- the ``posenc-terminology`` directive, the Chinese notation page's fixed terminology
  (nothing in the English build): :mod:`booktools.site.terminology`;
- the site's own strings in the edition's language: :mod:`booktools.site.zh_strings`.

The Chinese build itself (language, search, output folder) is :mod:`booktools.zh_build`.
Enabled in ``_config.yml`` under ``sphinx: local_extensions: {posenc_i18n: _ext}``.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx

from booktools.site import language_switch, terminology, zh_strings

TEMPLATES = str(Path(__file__).resolve().parent / "templates")


def _templates(app: Sphinx, config) -> None:
    if TEMPLATES not in config.templates_path:
        config.templates_path.append(TEMPLATES)


def setup(app: Sphinx) -> dict:
    app.add_directive("posenc-terminology", terminology.Terminology)
    app.connect("config-inited", _templates)
    # after pydata-sphinx-theme turns the header's template list into a list (priority 500)
    app.connect("html-page-context", language_switch.add_switch, priority=600)
    app.connect("html-page-context", zh_strings.translate_buttons, priority=700)
    app.connect("doctree-read", zh_strings.translate_captions)
    app.connect("doctree-resolved", zh_strings.translate_prompts)
    app.connect("build-finished", zh_strings.translate_pages)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
