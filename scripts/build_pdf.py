"""Build the whole book as one PDF, offline: Sphinx's single-page HTML, printed by Chromium.

    python scripts/build_pdf.py                  # -> _build/pdf/positional-encoding-executed.pdf
    python scripts/build_pdf.py --output book.pdf

The logic lives in :mod:`booktools.pdf` (``tools/booktools/pdf.py``).
"""

import sys

from booktools.pdf import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
