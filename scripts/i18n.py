"""The Chinese edition's catalogs (locale/zh_CN/LC_MESSAGES): one command to bring them
up to the English, one to check them (what tests/test_i18n.py checks).

    python scripts/i18n.py update   # regenerate the templates from the English, merge:
                                    # new messages untranslated, changed ones fuzzy, ...
    python scripts/i18n.py check    # 0 untranslated, 0 fuzzy, 0 obsolete, 0 token problems

The logic lives in :mod:`booktools.catalogs` (``tools/booktools/catalogs.py``).
"""

import sys

from booktools.catalogs import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
