"""The Sphinx side of the stamp of a clean site build (``_config.yml``: ``posenc_stamp``).

After a build, this extension removes ``<build>/posenc-html-stamp.json`` and writes it
again only when the build was clean and read every document; what a clean build is, the
digest of the build's inputs and where the stamp lies (the Chinese edition's, built into
``<build>/html/zh_CN``, is ``<build>/posenc-html-zh_CN-stamp.json``) are :mod:`booktools.stamp`
(``tools/booktools/stamp.py``), which ``tests/conftest.py`` uses to decide whether the
test run may reuse the site.
"""

from __future__ import annotations

import json
from pathlib import Path

from booktools.stamp import clean_build, inputs_digest, stamp_path


def _note_reads(app, env, docnames) -> None:
    app.posenc_read_all = set(docnames) >= set(env.found_docs)


def _write_stamp(app, exception) -> None:
    path = stamp_path(Path(app.outdir), app.config.language)
    path.unlink(missing_ok=True)
    if not clean_build(app, exception):
        return
    digest = inputs_digest(Path(app.srcdir))
    if digest is not None:
        path.write_text(json.dumps({"inputs": digest}) + "\n")


def setup(app):
    app.connect("env-before-read-docs", _note_reads)
    app.connect("build-finished", _write_stamp, priority=900)  # after every other handler
    return {"parallel_read_safe": True, "parallel_write_safe": True}
