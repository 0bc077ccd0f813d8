"""The site's Sphinx hooks, one module per job; ``_ext/posenc_site.py`` is only the
``setup()`` that connects them (``_config.yml``: ``local_extensions``).

- :mod:`booktools.site.mathjax`: MathJax 3 served from the site (no CDN);
- :mod:`booktools.site.assets`: the interactive figures' script (SVG, no plotting
  library), the atlas' script and the site's CSS (the files in ``_ext/``), on the pages
  that use them, and sphinx-design's files only where a page uses its components;
- :mod:`booktools.site.home`: the repository and launch buttons and the API page's link,
  from the book's home (:mod:`booktools.book_home`);
- :mod:`booktools.site.images`: the figures as indexed-colour PNGs, where that is not
  visible (about a quarter of the bytes), each with the smallest palette that is not;
- :mod:`booktools.site.highlight`: code blocks without the token spans their style draws
  in the block's own colour;
- :mod:`booktools.site.icons`: only the icons the site uses (Font Awesome's CSS rules and
  web fonts cut to them);
- :mod:`booktools.site.theme_css`: the theme's stylesheet cut to the rules a page can
  match;
- :mod:`booktools.site.pages`: the written pages post-processed: no icon kit, the search
  index on the search page only, no duplicate scripts, accessible toggles and roles;
- :mod:`booktools.site.source`: the book's source archive on the site, its link and its
  download-menu entry;
- :mod:`booktools.site.singlehtml`: the ``singlehtml`` builder (the PDF) made to render
  the notebooks.
"""
