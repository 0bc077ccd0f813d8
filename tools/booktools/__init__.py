"""The book's machinery, apart from the library ``posenc`` (and never in its wheel).

Installed editable from ``tools/`` by ``requirements.txt`` (``-e ./tools``). Modules:

- :mod:`booktools.hf_sweep`: the transformers family sweep, the oracle that runs every
  RoPE family's own rotary module and attention layers (used by the tests and the atlas);
- :mod:`booktools.hf_keys`: the key sweep built on it (every position key a config class
  accepts);
- :mod:`booktools.atlas`: the atlas page renderer (``book/atlas.md``), and
  ``scripts/build_atlas.py``'s page builder;
- :mod:`booktools.book_home`: the book's home in ``_config.yml`` and what derives from it
  (every chapter's install cell, the repository and launch buttons);
  ``scripts/book_home.py`` stamps the notebooks with it;
- :mod:`booktools.pdf`: the book as one PDF (``scripts/build_pdf.py``);
- :mod:`booktools.browser`: the local server, Chromium's set-up, the site crawl and the
  phone measurements (the browser check and the PDF);
- :mod:`booktools.site`: the site's Sphinx hooks, one module per job (``_ext/posenc_site.py``
  connects them);
- :mod:`booktools.run_layout`: how the test run is split into units across the workers
  (the root ``conftest.py`` delegates its hooks to it);
- :mod:`booktools.stamp`: the digest of a site build's inputs and the stamp of a clean
  build (``_ext/posenc_stamp.py`` writes it, the tests reuse the build it names).
"""
