"""Local Sphinx extension: the site's own hooks, connected here and kept in
:mod:`booktools.site`, one module per job.

- MathJax 3 served from ``_static/mathjax`` (no CDN): :mod:`booktools.site.mathjax`;
- ``posenc_interactive.js`` (the slider figures, drawn as SVG), ``posenc_atlas.js``,
  ``posenc_tabstops.js`` (a tab stop on every block that scrolls) and ``posenc_site.css``
  (the files next to this one) served from ``_static`` and added to the pages that use
  them: :mod:`booktools.site.assets`;
- the repository and launch buttons from the book's home in ``_config.yml``:
  :mod:`booktools.site.home`;
- sphinx-design's stylesheet and script only on pages that use its components:
  :mod:`booktools.site.assets`;
- the figures as indexed-colour PNGs where a reader cannot tell the difference:
  :mod:`booktools.site.images`;
- the code blocks without the token spans that change nothing a reader sees:
  :mod:`booktools.site.highlight`;
- only the icons the site uses (Font Awesome's glyph rules and web fonts cut to them):
  :mod:`booktools.site.icons`;
- the theme's stylesheet cut to the rules a page can match:
  :mod:`booktools.site.theme_css`;
- the written pages post-processed (Font Awesome's icon kit dropped, the search index on
  the search page only, duplicate scripts removed, accessible names and roles):
  :mod:`booktools.site.pages`;
- the book's source archive on the site, linked from the landing page and each chapter's
  download menu: :mod:`booktools.site.source`;
- the ``singlehtml`` builder (the PDF, :mod:`booktools.pdf`) made to render the
  notebooks: :mod:`booktools.site.singlehtml`.

Enabled in ``_config.yml`` under ``sphinx: local_extensions: {posenc_site: _ext}``.
"""

from __future__ import annotations

from sphinx.application import Sphinx

from booktools.site import (
    assets,
    highlight,
    home,
    icons,
    images,
    mathjax,
    pages,
    singlehtml,
    source,
    theme_css,
)


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinx.ext.mathjax")
    app.add_css_file(assets.SITE_CSS)
    app.add_js_file(assets.TABSTOPS_JS, loading_method="defer")
    app.connect("html-page-context", assets.interactive_scripts, priority=400)
    app.connect("html-page-context", assets.atlas_script, priority=400)
    app.connect("html-page-context", assets.design_assets_where_used, priority=400)
    app.connect("config-inited", mathjax.use_local_mathjax)
    app.connect("config-inited", home.configure_home)
    app.connect("builder-inited", singlehtml.single_page_support)
    app.connect("build-finished", mathjax.copy_mathjax)
    app.connect("build-finished", assets.copy_assets)
    app.connect("build-finished", pages.strip_icon_kit)
    app.connect("build-finished", icons.serve_used_icons)
    app.connect("build-finished", images.lighter_figures)
    # after pydata-sphinx-theme has written the pygments.css it reads (at build-finished)
    app.connect("build-finished", highlight.lighter_code, priority=900)
    app.connect("build-finished", theme_css.cut_theme_css, priority=900)  # after icons
    app.connect("build-finished", source.write_site_archive)
    app.connect("config-inited", source.source_link)
    app.connect("html-page-context", source.source_download_button, priority=600)
    app.connect("html-page-context", mathjax.menu_on_demand, priority=600)  # after Sphinx's
    app.connect("html-page-context", pages.dedupe_scripts, priority=900)
    app.connect("html-page-context", pages.name_toc_toggles, priority=900)  # after the theme's
    app.connect("html-page-context", pages.citation_roles)
    app.connect("html-page-context", pages.nest_module_index)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
