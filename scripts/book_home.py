"""Stamp every chapter's install cell from the book's home in ``_config.yml``.

    python scripts/book_home.py           # stamp every notebook's install cell
    python scripts/book_home.py --check   # exit 1 if a notebook's install cell differs

The logic lives in :mod:`booktools.book_home` (``tools/booktools/book_home.py``).
"""

import sys

from booktools.book_home import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
