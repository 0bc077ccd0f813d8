"""One figure style for the whole book.

Every chapter calls :func:`use_style` (through :func:`posenc.notebook.setup`) so figures
share fonts, sizes and an opaque white background (readable in the site's dark mode too).
Figures are labelled with English glosses: matplotlib's default fonts have no CJK glyphs.

matplotlib is an optional dependency of ``posenc`` (``pip install matplotlib``, or the
``plot`` extra: ``pip install ".[plot]"`` from a clone): it is
imported when a function here first needs it, so the rest of the package installs and
imports without it.
"""

from __future__ import annotations

import importlib

import numpy as np

__all__ = ["STYLE", "heatmap", "length_axis", "mean_band", "pyplot", "use_style"]


def _matplotlib(name: str = "matplotlib"):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name != "matplotlib":
            raise
        raise ModuleNotFoundError(
            "posenc's plotting helpers need matplotlib, an optional dependency: "
            'pip install matplotlib (the plot extra: pip install ".[plot]" from a clone)',
            name="matplotlib",
        ) from err


def pyplot():
    """``matplotlib.pyplot``, imported on first use.

    Raises:
        ModuleNotFoundError: matplotlib is not installed (the message says how to get it).
    """
    return _matplotlib("matplotlib.pyplot")

STYLE = {
    "figure.figsize": (6.4, 3.6),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.transparent": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "image.cmap": "RdBu_r",
    "font.family": "DejaVu Sans",
    "svg.hashsalt": "posenc",
    "path.simplify": False,
}


def use_style() -> None:
    """Apply the book's matplotlib style (idempotent).

    Raises:
        ModuleNotFoundError: matplotlib is not installed.
    """
    _matplotlib().rcParams.update(STYLE)


def heatmap(ax, data, *, xlabel: str, ylabel: str, title: str | None = None,
            cmap: str = "RdBu_r", symmetric: bool = True, colorbar_label: str | None = None):
    """Draw ``data`` (2-D array or tensor) as an image with labelled axes and a colorbar.

    Args:
        ax: a matplotlib ``Axes``.
        data: ``(rows, cols)`` values; rows go down the y axis.
        xlabel, ylabel: axis labels (include units).
        title: optional title.
        cmap: colormap name.
        symmetric: centre the colour scale on 0 (diverging data).
        colorbar_label: optional colorbar label.

    Returns:
        The ``AxesImage``.
    """
    arr = np.asarray(data, dtype=float)
    kwargs = {}
    if symmetric:
        lim = float(np.max(np.abs(arr))) or 1.0
        kwargs = {"vmin": -lim, "vmax": lim}
    im = ax.imshow(arr, aspect="auto", cmap=cmap, interpolation="nearest", **kwargs)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(False)
    if title:
        ax.set_title(title)
    cb = pyplot().colorbar(im, ax=ax)
    if colorbar_label:
        cb.set_label(colorbar_label)
    return im


def mean_band(ax, x, stats, *, label: str, color=None, marker: str = "o", ls: str = "-"):
    """A mean line with a shaded min–max band: one variant of a measured study.

    Args:
        ax: a matplotlib ``Axes``.
        x: ``(n,)`` x values (e.g. evaluation lengths).
        stats: ``n`` entries, each ``(mean, min, max)`` over seeds or ``None`` (not
            measured / cannot run: a gap in the line).
        label: legend label.
        color, marker, ls: line colour, marker and style.

    Returns:
        The ``Line2D`` of the mean.
    """
    nan = float("nan")
    mean, lo, hi = (np.array([nan if s is None else s[i] for s in stats], dtype=float)
                    for i in range(3))
    (line,) = ax.plot(x, mean, marker=marker, ls=ls, color=color, label=label)
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
    return line


def length_axis(ax, lengths, train_len: int, *, label: str = "evaluation length n (tokens)"):
    """A log-scaled x axis of evaluation lengths, ticked at ``lengths``, with the training
    length ``train_len`` marked by a dotted vertical line.

    Args:
        ax: a matplotlib ``Axes``.
        lengths: the evaluated lengths (tokens), ascending.
        train_len: the training length ``L`` (tokens).
        label: the x-axis label (``""`` for none).
    """
    ax.set_xscale("log")
    ax.set_xticks(list(lengths), [str(n) for n in lengths])
    ax.set_xticks([], minor=True)
    ax.axvline(train_len, color="k", ls=":", lw=1)
    if label:
        ax.set_xlabel(label)
