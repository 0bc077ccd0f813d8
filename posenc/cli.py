"""The ``posenc`` command line: ``python -m posenc inspect CONFIG`` (or ``posenc inspect``).

``inspect`` reads a Hugging Face ``config.json`` — a file, a checkpoint directory holding
one, or ``-`` for standard input — and prints what each layer of the model does with
positions, as :func:`posenc.hf_config.config_report` finds it: runs of identical layers
(window, RoPE or NoPE, base, rotated channels and pairing, scaling with its factors and
attention factor), the layer pattern and its period, and the RoPE keys the family ignores.
``--json`` prints the same facts as JSON (:meth:`~posenc.hf_config.ConfigReport.to_dict`),
``--layers`` one line per layer.

Exit status: 0 read; 1 refused (``posenc`` cannot represent this config: the reason goes
to standard error); 2 bad input (no such file, not JSON, not a JSON object) or bad usage —
always one line on standard error, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

__all__ = ["main"]

#: Exit statuses of ``posenc inspect``.
EXIT_OK, EXIT_REFUSED, EXIT_BAD_INPUT = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="posenc",
        description="Positional encodings, executed: what a model does with positions.",
    )
    parser.add_argument("--version", action="version", version=f"posenc {__version__}")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    inspect = verbs.add_parser(
        "inspect",
        help="per layer, what a transformers config.json does with positions",
        description=(
            "Read a transformers config.json and print, per run of identical layers, "
            "what the model does with positions: attention type and window, RoPE or "
            "NoPE, base, rotated channels and their pairing, scaling method with its "
            "factors and attention factor; then the layer pattern and the RoPE keys the "
            "family ignores. Exit status 1 with the reason on standard error when posenc "
            "refuses the config, 2 for unreadable input."
        ),
    )
    inspect.add_argument("config", metavar="CONFIG",
                         help="a config.json, a checkpoint directory holding one, or - "
                              "for standard input")
    out = inspect.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true",
                     help="print the same facts as JSON (for scripts)")
    out.add_argument("--layers", action="store_true", help="print every layer")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    Args:
        argv: the arguments after the program name (``sys.argv[1:]`` when ``None``).
    """
    args = _parser().parse_args(argv)
    from .hf_config.files import ConfigFileError, read_config
    from .hf_config.report import config_report

    try:
        config = read_config(args.config)
    except ConfigFileError as err:
        print(f"posenc inspect: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        report = config_report(config)
    except (ValueError, TypeError) as err:
        reason = " ".join(str(err).split())
        print(f"posenc inspect: refused {args.config}: {reason}", file=sys.stderr)
        return EXIT_REFUSED
    text = json.dumps(report.to_dict(), indent=2) if args.json \
        else report.text(every_layer=args.layers)
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `posenc inspect ... | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_OK
