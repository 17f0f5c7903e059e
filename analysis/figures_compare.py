"""`vramsim compare` files: the verdict and one bar per option for each metric of
/compare/options (serving: capacity under the SLOs, capacity ratio over one GPU, scaling
efficiency, and throughput, goodput and p99 TTFT/TPOT at the given rate; training: step time,
peak memory, speed-up), and the options table."""

import textwrap

import numpy as np

import vramsim_results as vr
from figure_common import (Figure, Skipped, Table, TALL, finish, group_table, new_figure,
                           save)

SECTION = "Compare"
# (column, panel title, axis label, scale from the stored unit, higher is better)
SERVE_PANELS = (
    ("capacity_requests_per_s", "Capacity under the SLOs", "capacity (requests/s)", 1.0, True),
    ("capacity_ratio", "Capacity / one GPU's", "capacity ratio (x)", 1.0, True),
    ("scaling_efficiency", "Scaling efficiency", "capacity ratio / GPUs (1)", 1.0, True),
    ("throughput_output_tokens_per_s", "Output tokens/s, given rate",
     "output throughput (tokens/s)", 1.0, True),
    ("goodput_requests_per_s", "Goodput, given rate", "goodput (requests/s)",
     1.0, True),
    ("ttft_p99_s", "p99 TTFT, given rate", "p99 TTFT (ms)", 1e3, False),
    ("tpot_p99_s", "p99 TPOT, given rate", "p99 TPOT (ms)", 1e3, False),
)
TRAIN_PANELS = (
    ("step_time_s", "Step time", "step time (s)", 1.0, False),
    ("peak_allocated_bytes", "Peak allocated memory per device", "peak allocated (GiB)",
     1.0 / vr.BYTES_PER_GIB, False),
    ("speedup", "Speed-up over one GPU", "tokens/s ratio (x)", 1.0, True),
    ("tokens_per_s", "Training throughput", "throughput (tokens/s)", 1.0, True),
    ("scaling_efficiency", "Scaling efficiency", "speed-up / GPUs (1)", 1.0, True),
)
# Ratios to the first option (one GPU): undefined when it does not fit.
RATIO_COLUMNS = ("speedup", "capacity_ratio", "scaling_efficiency")


def _num(value):
    """A bar's label: thousands with separators, smaller values to 3 significant digits."""
    if not np.isfinite(value):
        return "n/a"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _mode(res, options):
    mode = vr.attr(res.group("compare"), "mode", "")
    if mode in ("serve", "train"):
        return mode
    return "train" if "step_time_s" in options else "serve"


def render(res, outdir, max_points):
    del max_points  # a handful of options
    title = "Compare: the options side by side"
    options = res.group("compare/options")
    if options is None or vr.num_rows(options) == 0:
        return [Skipped(SECTION, title, "the file has no /compare/options table or it is empty")]
    mode = _mode(res, options)
    panels = [p for p in (TRAIN_PANELS if mode == "train" else SERVE_PANELS) if p[0] in options]
    if not panels:
        return [Skipped(SECTION, title, "/compare/options has none of the metric columns of "
                        f"{mode} mode")]
    n = vr.num_rows(options)
    names = vr.column(options, "name")
    names = [str(s) for s in names] if names is not None else [f"option {i}" for i in range(n)]
    gpus = vr.column(options, "num_gpus")
    labels = [f"{nm} ({int(g)} GPU{'s' if g != 1 else ''})" if gpus is not None else nm
              for nm, g in zip(names, gpus if gpus is not None else [0] * n)]
    fits = vr.column(options, "fits")
    cols = 3 if len(panels) > 4 else 2 if len(panels) > 1 else 1
    rows = int(np.ceil(len(panels) / cols))
    fig, axes = new_figure(TALL, rows, cols, squeeze=False)
    palette = [f"C{i % 10}" for i in range(n)]
    y = np.arange(n)
    fitting = (np.ones(n, bool) if fits is None else np.asarray(fits).astype(bool))
    baseline_fits = bool(fitting[0]) if n else False
    for ax, (col, ptitle, unit, scale, higher) in zip(axes.flat, panels):
        v = vr.column(options, col).astype(np.float64) * scale
        # An option that does not fit has no value: a 0 bar would read as a measured zero.
        v[~fitting] = np.nan
        if col in RATIO_COLUMNS and not baseline_fits:
            v[:] = np.nan
        bars = ax.barh(y, np.nan_to_num(v), color=palette)
        finite = np.isfinite(v)
        if np.any(finite):
            best = np.nanargmax(v) if higher else np.nanargmin(v)
            bars[best].set_edgecolor("black")
            bars[best].set_linewidth(1.5)
        for yi, value, ok in zip(y, v, fitting):
            text = f" {_num(value)}" if np.isfinite(value) else (
                " does not fit" if not ok else " n/a")
            ax.text(value if np.isfinite(value) else 0, yi, text, va="center", fontsize=8)
        if col in RATIO_COLUMNS and not baseline_fits:
            ax.text(0.5, 0.5, "one GPU does not fit:\nno ratio to it", transform=ax.transAxes,
                    ha="center", va="center", fontsize=9, color="0.3")
        elif col in ("speedup", "capacity_ratio"):
            ax.axvline(1.0, color="grey", ls="--", lw=1)
        ax.set_title(f"{ptitle}\n({'higher' if higher else 'lower'} is better)", fontsize=9)
        ax.set_xlabel(unit)
        ax.set_yticks(y)
        ax.set_yticklabels(labels, fontsize=8)
        ax.invert_yaxis()
        ax.margins(x=0.2)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    verdict = vr.attr(res.group("compare"), "verdict", "")
    fig.suptitle("\n".join(textwrap.wrap(verdict, 110)[:3]) or "vramsim compare", fontsize=10)
    finish(fig)
    name = save(fig, outdir, "compare_verdict.png")
    caption = ("One bar per option of /compare/options; the best option of each metric has a "
               "black edge.")
    if mode == "serve":
        caption += (" Goodput: requests per second that met every SLO; capacity: the largest "
                    "rate that meets them (the capacity search).")
    if fits is not None and not fitting.all():
        caption += " An option that does not fit in memory has no bar (\"does not fit\")."
    if not baseline_fits and any(p[0] in RATIO_COLUMNS for p in panels):
        caption += " One GPU does not fit, so the ratios to it are undefined."
    missing = [p[0] for p in (TRAIN_PANELS if mode == "train" else SERVE_PANELS)
               if p[0] not in options]
    if missing:
        caption += " Not in this file: " + ", ".join(missing) + "."
    return [Figure(SECTION, name, title, caption)]


def tables(res):
    out = []
    compare = res.group("compare")
    if compare is not None:
        rows = [[k, vr.text(compare.attrs[k])] for k in sorted(compare.attrs)]
        out.append(Table(SECTION, "Verdict", ["attribute", "value"], rows))
    options = res.group("compare/options")
    if options is not None:
        out.append(group_table(options, SECTION, "Options (/compare/options)",
                               transpose_upto=0))
    return out
