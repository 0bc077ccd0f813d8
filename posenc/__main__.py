"""``python -m posenc``: the command line (:mod:`posenc.cli`)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
