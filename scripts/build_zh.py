"""Build the Chinese edition into _build/html/zh_CN, after the English site (README
command 1): nitpicky, warnings as errors; exits 1 and lists the warnings if there is one.

    python scripts/build_zh.py
    python scripts/build_zh.py --output /tmp/zh

The logic lives in :mod:`booktools.zh_build` (``tools/booktools/zh_build.py``).
"""

import sys

from booktools.zh_build import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
