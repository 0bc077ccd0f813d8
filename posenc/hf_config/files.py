"""Read a ``config.json`` from disk: a file, a checkpoint directory, or standard input.

:func:`read_config` is what :func:`~posenc.hf_config.layer_specs` (and every reader of
:mod:`posenc.hf_config`) calls when it is given a path instead of a dict or config object,
and what ``python -m posenc inspect`` calls on its argument. Every failure is one
exception whose message names the path and what is wrong with it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

__all__ = ["ConfigFileError", "read_config"]


class ConfigFileError(ValueError):
    """A path that does not lead to a readable ``config.json`` object (the message says why)."""


def read_config(path) -> dict:
    """The JSON object of a ``config.json``.

    Args:
        path: a ``config.json`` file, a directory holding one (a downloaded checkpoint),
            or ``"-"`` for standard input (a ``str`` or ``os.PathLike``).

    Returns:
        The parsed object, a new ``dict``.

    Raises:
        ConfigFileError: (a ``ValueError``) no such file or directory; a directory
            without ``config.json``; a file that cannot be read, is not UTF-8, is not
            JSON (the message gives line and column) or holds something other than a
            JSON object.
    """
    name = os.fspath(path)
    if name == "-":
        where, text = "standard input", sys.stdin.read()
    else:
        p = Path(name)
        if p.is_dir():
            p = p / "config.json"
            if not p.is_file():
                raise ConfigFileError(f"{name}: directory has no config.json")
        where = str(p)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigFileError(f"{where}: no such file or directory") from None
        except UnicodeDecodeError as err:
            raise ConfigFileError(f"{where}: not UTF-8 text ({err.reason})") from None
        except OSError as err:
            raise ConfigFileError(f"{where}: cannot be read ({err.strerror})") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigFileError(
            f"{where}: not JSON ({err.msg} at line {err.lineno}, column {err.colno})"
        ) from None
    if not isinstance(value, dict):
        raise ConfigFileError(
            f"{where}: holds a JSON {type(value).__name__}, not an object of config keys"
        )
    return value
