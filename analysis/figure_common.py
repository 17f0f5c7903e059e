"""What the figure modules share: the Agg backend with fixed sizes and no metadata that varies
between runs, and the records a figure function returns (a written figure, or a skipped one
with the reason, which the HTML page shows)."""

import os
import textwrap
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after selecting the backend)
from matplotlib.text import Text  # noqa: E402

# Fixed size and resolution: every PNG of a kind has the same pixel dimensions.
DPI = 100
WIDE = (10.0, 5.0)  # 1000 x 500 px
TALL = (10.0, 7.5)  # 1000 x 750 px

plt.rcParams.update({
    "svg.hashsalt": "vramsim",  # deterministic ids should anyone save SVG
    "path.simplify": True,
    "agg.path.chunksize": 20000,  # long lines render in pieces instead of failing
    "font.size": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
})

# PNG metadata without the matplotlib version, so the bytes depend only on the data and the
# renderer (Agg writes no time stamp).
PNG_METADATA = {"Software": None}

# Memory categories, in the order they are stacked, with colours shared by the figures.
CATEGORY_COLORS = {
    "parameters": "#1f77b4",
    "gradients": "#ff7f0e",
    "optimizer_state": "#2ca02c",
    "activations": "#d62728",
    "temporaries": "#9467bd",
    "workspaces": "#8c564b",
    "comm_buffers": "#e377c2",
    "weights": "#1f77b4",
    "activation_peak": "#d62728",
    "non_torch": "#7f7f7f",
    "cuda_graph": "#bcbd22",
    "kv_cache": "#17becf",
}


@dataclass
class Figure:
    """A PNG written into the output folder."""
    section: str
    file: str
    title: str
    caption: str = ""


@dataclass
class Skipped:
    """A figure that could not be drawn from this file, and why."""
    section: str
    title: str
    reason: str


def new_figure(size=WIDE, rows=1, cols=1, **kwargs):
    fig, axes = plt.subplots(rows, cols, figsize=size, dpi=DPI, **kwargs)
    return fig, axes


# What each figure written in this process says, by its path: the titles, axis labels, legend
# entries and texts of every axes, and the texts that do not fit on the canvas. The tests read
# it (every axis names its unit, no title is cut off); the report does not need it.
SAVED = {}


def figure_texts(fig):
    """{"suptitle", "axes": [{"title", "xlabel", "ylabel", "legend", "texts", "yticklabels"}]}
    of `fig`'s
    visible axes, titles joined from the left, centre and right ones."""
    sup = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    axes = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        legend = ax.get_legend()
        axes.append({
            "title": " ".join(t for t in (ax.get_title("left"), ax.get_title(),
                                          ax.get_title("right")) if t),
            "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
            "legend": [t.get_text() for t in legend.get_texts()] if legend else [],
            "texts": [t.get_text() for t in ax.texts],
            "yticklabels": [t.get_text() for t in ax.get_yticklabels()],
        })
    return {"suptitle": sup, "axes": axes}


def cut_off_texts(fig):
    """The visible, non-empty texts of `fig` (tick labels aside: matplotlib keeps those outside
    the view limits undrawn) that reach past the canvas by more than a pixel, and the titles of
    side-by-side axes wider than their axes (they run into the next panel): a list of the
    texts, empty when everything fits."""
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    ticks = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                ticks.update((id(tick.label1), id(tick.label2)))
        ticks.add(id(ax.xaxis.get_offset_text()))
        ticks.add(id(ax.yaxis.get_offset_text()))
    out = []
    for t in fig.findobj(Text):
        if (not t.get_visible() or not t.get_text().strip() or t.figure is None
                or id(t) in ticks):
            continue
        bb = t.get_window_extent(renderer)
        if bb.x0 < -1 or bb.y0 < -1 or bb.x1 > width + 1 or bb.y1 > height + 1:
            out.append(t.get_text())
    visible = [ax for ax in fig.axes if ax.get_visible()]
    if len(visible) > 1:
        for ax in visible:
            title = ax.title
            if title.get_text().strip():
                bb = title.get_window_extent(renderer)
                if bb.width > ax.bbox.width + 2:
                    out.append(title.get_text())
    return out


def wrap(text, width):
    """`text` wrapped at `width` characters per line (a title that fits its axes)."""
    return "\n".join(textwrap.wrap(str(text), width)) or str(text)


def fit_titles(fig):
    """Wraps each axes title wider than its axes, and a suptitle wider than the figure, onto
    more lines (shorter ones each time) until it fits; call before tight_layout, which then
    makes room for the extra lines."""
    renderer = fig.canvas.get_renderer()
    titled = [(ax.title, ax.get_position().width * fig.bbox.width)
              for ax in fig.axes if ax.get_visible() and ax.title.get_text().strip()]
    if getattr(fig, "_suptitle", None) is not None and fig._suptitle.get_text().strip():
        titled.append((fig._suptitle, 0.96 * fig.bbox.width))
    for title, room in titled:
        text = title.get_text().replace("\n", " ")
        width = len(text)
        while title.get_window_extent(renderer).width > room and width > 12:
            width = int(width * 0.85)
            title.set_text(wrap(text, width))


def finish(fig):
    """Titles that fit (fit_titles), then matplotlib's tight layout."""
    fit_titles(fig)
    fig.tight_layout()


def save(fig, outdir, name):
    """Writes `fig` as outdir/name (PNG, fixed size, no varying metadata) and closes it."""
    path = os.path.join(outdir, name)
    fig.savefig(path, dpi=DPI, format="png", metadata=PNG_METADATA)
    record = figure_texts(fig)
    record["cut_off"] = cut_off_texts(fig)
    SAVED[os.path.abspath(path)] = record
    plt.close(fig)
    return name


def short(s, width=60):
    s = str(s)
    return s if len(s) <= width else s[: width - 3] + "..."


def time_axis(max_seconds):
    """(scale divisor from seconds, label) for a time axis spanning `max_seconds`."""
    if max_seconds >= 3 * 3600:
        return 3600.0, "h"
    if max_seconds >= 3 * 60:
        return 60.0, "min"
    if max_seconds >= 1:
        return 1.0, "s"
    return 1e-3, "ms"


@dataclass
class Table:
    """A table the HTML page shows: header cells and rows of text cells."""
    section: str
    title: str
    headers: list
    rows: list
    note: str = ""


def fmt_number(value, unit=""):
    """A cell for people: integers with separators, floats to 4 significant digits, bytes also
    in GiB, seconds also in ms when small."""
    if value is None:
        return ""
    if isinstance(value, (bytes, str)):
        return value.decode() if isinstance(value, bytes) else value
    try:
        v = value.item() if hasattr(value, "item") else value
    except (ValueError, AttributeError):
        v = value
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        s = f"{v:,}"
        if unit == "B" and abs(v) >= 1 << 20:
            s += f" ({v / (1 << 30):.2f} GiB)"
        elif unit == "ns" and abs(v) >= 1000:
            s += f" ({v / 1e9:.4g} s)"
        return s
    if isinstance(v, float):
        if v != v:  # NaN
            return "–"
        s = f"{v:.4g}"
        if unit == "s" and 0 < abs(v) < 1:
            s += f" ({v * 1e3:.4g} ms)"
        return s
    return str(v)


def group_table(group, section, title, note="", transpose_upto=8, max_rows=500):
    """A table group as a Table: with at most `transpose_upto` rows, one line per column (field,
    units, a value per row) so wide tables stay readable; otherwise one line per row, the first
    `max_rows` rows."""
    import vramsim_results as vr

    names = vr.columns(group)
    n = vr.num_rows(group)
    shown = min(n, max_rows)
    cols = {c: vr.column(group, c, slice(0, shown)) for c in names}
    unit = {c: vr.units(group, c) for c in names}
    if n <= transpose_upto:
        label = "name" if "name" in cols else None
        heads = [str(cols[label][i]) if label else f"row {i}" for i in range(n)]
        rows = [[c, unit[c]] + [fmt_number(cols[c][i], unit[c]) for i in range(n)]
                for c in names if c != label]
        return Table(section, title, ["field", "units"] + heads, rows, note)
    head = [f"{c} ({unit[c]})" if unit[c] not in ("", "1") else c for c in names]
    rows = [[fmt_number(cols[c][i], unit[c]) for c in names] for i in range(shown)]
    if shown < n:
        note = (note + " " if note else "") + f"First {shown} of {n:,} rows."
    return Table(section, title, head, rows, note)
