"""Regenerate ``book/atlas.md``: one row per RoPE family of the pinned ``transformers``.

A thin entry point: the page is built by :mod:`booktools.atlas` (``tools/booktools/``,
installed by ``requirements.txt``), from the families the sweep finds in ``transformers``
itself (:mod:`booktools.hf_sweep`). Model types that are not text models are listed
apart; families whose default config ``transformers`` cannot build are listed with the
error.

    python scripts/build_atlas.py           # write book/atlas.md
    python scripts/build_atlas.py --check   # exit 1 if book/atlas.md is not what it writes

``tests/test_atlas.py`` runs :func:`booktools.atlas.build_page` and compares it with the
committed file.
"""

import sys

from booktools.atlas import main

if __name__ == "__main__":
    sys.exit(main())
