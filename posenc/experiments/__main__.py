"""``python -m posenc.experiments``: see :func:`posenc.experiments.cli.main`."""

from .cli import main

raise SystemExit(main())
