"""`vramsim sweep` files: for a serving sweep over an arrival rate (or concurrency), latency and
throughput against it per GPU/TP configuration; Pareto fronts over the points of
/sweep/summary (serving: output throughput against p99 latency; training: step time against
peak memory); the table."""

import numpy as np

import vramsim_results as vr
from figure_common import Figure, Skipped, TALL, WIDE, finish, group_table, new_figure, save

SECTION = "Sweep"
THROUGHPUT = "throughput_output_tokens_per_s"
LATENCIES = (("ttft_p99_s", "p99 TTFT"), ("tpot_p99_s", "p99 TPOT"), ("e2e_p99_s", "p99 E2E"))
NOT_AXES = {"status", "reason", "name"}
# A grid axis with more distinct values than this is not used to colour points.
MAX_COLOURS = 10
# Points on a front labelled with their values and settings; beyond this they would pile up.
MAX_LABELS = 25
# Grid fields that set the offered load, by the last part of their name, with the x label.
LOAD_AXES = {"rate": "arrival rate (requests/s)",
             "max_concurrency": "concurrency (requests in flight)",
             "concurrency": "concurrency (requests in flight)"}
# A point's settings are written beside its values when they fit this many characters.
SETTINGS_CHARS_PANEL = 36


def pareto_front(x, y, maximize_y):
    """Indices of the points no other point beats: lower x and (higher or lower) y, in x order."""
    order = np.lexsort((-y if maximize_y else y, x))
    front, best = [], None
    for i in order:
        if best is None or (y[i] > best if maximize_y else y[i] < best):
            front.append(i)
            best = y[i]
    return np.array(front, dtype=np.int64)


def _ok_mask(summary, n):
    status = vr.column(summary, "status")
    if status is None:
        return np.ones(n, bool)
    s = np.char.lower(np.asarray(status).astype(str))
    bad = np.char.startswith(s, "infeasible") | (np.char.find(s, "fail") >= 0) | \
        (np.char.find(s, "error") >= 0) | (np.char.find(s, "skip") >= 0)
    return ~bad


def grid_axes(summary):
    """The string columns that name grid values (all string columns but status and reason)."""
    return [c for c in vr.columns(summary)
            if c not in NOT_AXES and vr.is_string(summary[c])]


def sweep_axes(res, summary):
    """The sweep's own axes: the `axes` of the file's inputs (the grid's fields, in order) that
    are columns of /sweep/summary, else every grid-value column (grid_axes)."""
    axes = res.inputs().get("axes") if res is not None else None
    if isinstance(axes, list):
        present = [a for a in axes if isinstance(a, str) and a in summary]
        if present:
            return present
    return grid_axes(summary)


def _colour_axis(summary, mask):
    """The first grid axis with 2..MAX_COLOURS distinct values among the plotted points."""
    for axis in grid_axes(summary):
        values = np.asarray(vr.column(summary, axis)).astype(str)
        distinct = np.unique(values[mask])
        if 2 <= len(distinct) <= MAX_COLOURS:
            return axis, values, list(distinct)
    return None, None, None


def settings_labeller(summary, axes, rows, width):
    """(function of a row giving its grid values, key): "gpu=h100-sxm tp=2 rate=64.0" (the
    last part of each field's name) when that fits `width` characters for every row of
    `rows`, key ""; else just the values ("fsdp-full 1 none") and the key naming the fields in
    order; no settings at all (key "") when even those are too long."""
    short = [a.rsplit(".", 1)[-1] for a in axes]
    values = {c: np.asarray(vr.column(summary, c)).astype(str) for c in axes}

    def keyed(i):
        return " ".join(f"{k}={values[c][i]}" for k, c in zip(short, axes))

    def bare(i):
        return " ".join(values[c][i] for c in axes)

    if all(len(keyed(i)) <= width for i in rows):
        return keyed, ""
    if all(len(bare(i)) <= width for i in rows):
        return bare, " ".join(short)
    return (lambda i: ""), ""


def _scatter_front(ax, summary, x, y, ok, maximize_y, label_of, legend_at):
    """Points coloured by a grid axis, the Pareto front joined and circled, each front point
    labelled with `label_of(i)` (its values and settings)."""
    axis, values, distinct = _colour_axis(summary, ok)
    if axis is None:
        ax.scatter(x[ok], y[ok], s=18, color="C0", alpha=0.7, label="points")
    else:
        for k, v in enumerate(distinct):
            sel = ok & (values == v)
            ax.scatter(x[sel], y[sel], s=18, color=f"C{k}", alpha=0.75, label=f"{axis}={v}")
    ids = np.flatnonzero(ok)
    front = ids[pareto_front(x[ok], y[ok], maximize_y)]
    ax.plot(x[front], y[front], color="black", lw=1.2, drawstyle="steps-post",
            label=f"Pareto front ({len(front)} points)")
    ax.scatter(x[front], y[front], s=40, facecolors="none", edgecolors="black")
    if len(front) <= MAX_LABELS:
        for i in front:
            ax.annotate(label_of(i), (x[i], y[i]), textcoords="offset points", xytext=(4, 4),
                        fontsize=6, va="bottom", linespacing=1.0)
    ax.margins(x=0.12, y=0.14)  # room for the labels of the outermost points
    ax.legend(fontsize=7, loc=legend_at)
    return front


def latency_units(summary, ok):
    """{"ttft"|"e2e": (scale, unit), "tpot": (1e3, "ms")}: per-token times in milliseconds;
    TTFT and E2E share one unit over the figure, seconds when some point takes 2 s or more."""
    request = (1e3, "ms")
    for col in ("ttft_p99_s", "e2e_p99_s", "ttft_p50_s", "e2e_p50_s"):
        if col in summary:
            x = vr.column(summary, col).astype(np.float64)
            if np.any(ok & np.isfinite(x) & (x >= 2.0)):
                request = (1.0, "s")
    return {"ttft": request, "e2e": request, "tpot": (1e3, "ms")}


def render(res, outdir, max_points):
    del max_points  # a sweep has as many points as its grid; all are drawn
    summary = res.group("sweep/summary")
    if summary is None or vr.num_rows(summary) == 0:
        return [Skipped(SECTION, "Sweep Pareto fronts",
                        "the file has no /sweep/summary table or it is empty")]
    n = vr.num_rows(summary)
    ok = _ok_mask(summary, n)
    index = vr.column(summary, "point_index")
    index = index if index is not None else np.arange(n)
    note = f" {int((~ok).sum())} of {n} points are infeasible or failed and not drawn." \
        if np.any(~ok) else ""
    grid = sweep_axes(res, summary)
    return [serve_load(summary, ok, grid, outdir),
            serve_front(summary, ok, index, grid, outdir, note),
            train_front(summary, ok, index, grid, outdir, note)]


def load_axis(summary, grid):
    """The grid axis that sets the offered load (a field named `rate`, `max_concurrency` or
    `concurrency`, e.g. `workload.rate`) with numeric values, two or more distinct: (name,
    values as float, label of the x axis), or None."""
    for axis in grid:
        last = axis.rsplit(".", 1)[-1]
        if last not in LOAD_AXES:
            continue
        try:
            x = np.array([float(v) for v in np.asarray(vr.column(summary, axis)).astype(str)])
        except ValueError:
            continue
        if len(np.unique(x[np.isfinite(x)])) >= 2:
            return axis, x, LOAD_AXES[last]
    return None


def serve_load(summary, ok, grid, outdir):
    """Throughput, goodput and p50/p99 TTFT and TPOT against the rate (or concurrency), one
    line per combination of the other grid axes (GPU, TP, ...)."""
    title = "Sweep: latency and throughput against the load, per configuration"
    if THROUGHPUT not in summary:
        return Skipped(SECTION, title, f"/sweep/summary has no {THROUGHPUT} column: not a "
                       "serving sweep")
    load = load_axis(summary, grid)
    if load is None:
        return Skipped(SECTION, title, "the sweep varies no arrival rate or concurrency (a "
                       "grid axis such as workload.rate or workload.max_concurrency)")
    axis, x, xlabel = load
    others = [a for a in grid if a != axis]
    values = {a: np.asarray(vr.column(summary, a)).astype(str) for a in others}
    config = np.array([" ".join(f"{a.rsplit('.', 1)[-1]}={values[a][i]}" for a in others)
                       for i in range(len(x))])
    names = list(dict.fromkeys(config))
    units = latency_units(summary, ok)
    panels = [(THROUGHPUT, "Output throughput", "output throughput (tokens/s)", 1.0)]
    if "goodput_requests_per_s" in summary:
        panels.append(("goodput_requests_per_s", "Goodput (requests meeting every SLO)",
                       "goodput (requests/s)", 1.0))
    for metric, name in (("ttft", "TTFT"), ("tpot", "TPOT")):
        scale, unit = units[metric]
        if f"{metric}_p99_s" in summary:
            panels.append((metric, f"{name} p50 (dashed) and p99 (solid)", f"{name} ({unit})",
                           scale))
    fig, axes = new_figure(TALL, 2, 2, squeeze=False)
    drawn = ok & np.isfinite(x)
    missing = [c for c in names if not np.any(drawn & (config == c))]
    log_x = bool(np.any(drawn) and np.all(x[drawn] > 0) and x[drawn].max() >= 8 * x[drawn].min())
    ticks = np.unique(x[drawn])
    for ax, (col, ptitle, ylabel, scale) in zip(axes.flat, panels):
        for k, c in enumerate(names):
            sel = drawn & (config == c)
            if not np.any(sel):
                continue
            order = np.flatnonzero(sel)[np.argsort(x[sel], kind="stable")]
            if col in (THROUGHPUT, "goodput_requests_per_s"):
                y = vr.column(summary, col).astype(np.float64)
                ax.plot(x[order], y[order] * scale, marker="o", ms=4, color=f"C{k % 10}",
                        label=c or "all points")
            else:
                for q, style in (("p50", "--"), ("p99", "-")):
                    name = f"{col}_{q}_s"
                    if name in summary:
                        y = vr.column(summary, name).astype(np.float64) * scale
                        ax.plot(x[order], y[order], ls=style, marker="o", ms=3,
                                color=f"C{k % 10}", label=f"{c} {q}".strip())
        if log_x:
            ax.set_xscale("log")
            ax.set_xticks(ticks)
            ax.set_xticklabels([f"{t:g}" for t in ticks])
            ax.minorticks_off()
        ax.set_title(ptitle, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        lines = [ln.get_ydata() for ln in ax.get_lines()]
        y_all = np.concatenate(lines) if lines else np.array([])
        y_all = y_all[np.isfinite(y_all)]
        if col in ("ttft", "tpot") and len(y_all) and y_all.min() > 0 \
                and y_all.max() >= 100 * y_all.min():
            ax.set_yscale("log")  # latencies spanning orders of magnitude
        else:
            ax.set_ylim(bottom=0)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=7, loc="upper left", title=" ".join(
        a.rsplit(".", 1)[-1] for a in others) or None, title_fontsize=7)
    fig.suptitle(f"Serving sweep: {len(names)} configuration(s) against "
                 f"{axis.rsplit('.', 1)[-1]}")
    finish(fig)
    name = save(fig, outdir, "sweep_serve_load.png")
    caption = (f"One line per combination of the sweep's other axes ({', '.join(others)}), "
               f"against {axis}; points that are infeasible or failed are not drawn. TTFT and "
               "TPOT: p50 dashed, p99 solid (the summary's histogram percentiles).")
    if missing:
        caption += " No feasible point: " + "; ".join(missing) + "."
    return Figure(SECTION, name, title, caption)


def _label_key(ax, key, values):
    """What a front point's label says, when its settings are bare values."""
    if key:
        ax.text(0.01, 0.01, f"labels: #point {key}\n{values}", transform=ax.transAxes,
                fontsize=6, va="bottom", color="#555")


def _label(index, settings, values):
    """A front point's label: "#5 gpu=h100-sxm tp=2" over its values."""
    head = f"#{index} {settings}".rstrip()
    return f"{head}\n{values}"


def serve_front(summary, ok, index, grid, outdir, note):
    title = "Sweep: output throughput against p99 latency"
    lats = [(c, t) for c, t in LATENCIES if c in summary]
    if THROUGHPUT not in summary or not lats:
        return Skipped(SECTION, title, f"/sweep/summary has no {THROUGHPUT} column or no p99 "
                       "latency column (ttft_p99_s, tpot_p99_s, e2e_p99_s): not a serving sweep")
    y = vr.column(summary, THROUGHPUT).astype(np.float64)
    units = latency_units(summary, ok)
    fig, axes = new_figure(WIDE, 1, len(lats), squeeze=False)
    for ax, (col, label) in zip(axes[0], lats):
        x = vr.column(summary, col).astype(np.float64)
        good = ok & np.isfinite(x) & np.isfinite(y)
        scale, unit = units[col.split("_")[0]]
        if not np.any(good):
            ax.text(0.5, 0.5, "no feasible point", ha="center", transform=ax.transAxes)
        else:
            xs = x * scale
            settings, key = settings_labeller(summary, grid, np.flatnonzero(good),
                                              SETTINGS_CHARS_PANEL)
            _scatter_front(ax, summary, xs, y, good, True, lambda i, xs=xs, unit=unit: _label(
                index[i], settings(i), f"{xs[i]:.3g} {unit}, {y[i]:,.0f} tok/s"),
                "center right")
            _label_key(ax, key, f"p99 {label.split()[-1]}, throughput")
        ax.set_xlabel(f"{label} ({unit})")
        ax.set_ylabel("output throughput (tokens/s)")
        ax.set_title(f"Throughput vs {label}")
    finish(fig)
    name = save(fig, outdir, "sweep_pareto_serve.png")
    return Figure(SECTION, name, title, "One dot per point of /sweep/summary; the front joins "
                  "the points no other point beats on both throughput (higher) and latency "
                  "(lower); each front point is labelled with its point_index, its grid values "
                  "and its latency and throughput." + note)


def train_front(summary, ok, index, grid, outdir, note):
    title = "Sweep: step time against peak memory"
    if "step_time_s" not in summary or "peak_allocated_bytes" not in summary:
        return Skipped(SECTION, title, "/sweep/summary has no step_time_s or "
                       "peak_allocated_bytes column: not a training sweep")
    x = vr.gib(vr.column(summary, "peak_allocated_bytes"))
    y = vr.column(summary, "step_time_s").astype(np.float64)
    good = ok & np.isfinite(x) & np.isfinite(y) & (y > 0)
    fig, ax = new_figure(WIDE)
    if not np.any(good):
        ax.text(0.5, 0.5, "no feasible point", ha="center", transform=ax.transAxes)
    else:
        settings, key = settings_labeller(summary, grid, np.flatnonzero(good),
                                          SETTINGS_CHARS_PANEL)
        _scatter_front(ax, summary, x, y, good, False, lambda i: _label(
            index[i], settings(i), f"{x[i]:.1f} GiB, {y[i]:.3g} s"), "upper right")
        _label_key(ax, key, "peak memory, step time")
    ax.set_xlabel("peak allocated memory per device (GiB)")
    ax.set_ylabel("step time (s)")
    ax.set_title("Step time vs peak memory (lower-left is better)")
    finish(fig)
    name = save(fig, outdir, "sweep_pareto_train.png")
    return Figure(SECTION, name, title, "One dot per point of /sweep/summary; the front joins "
                  "the points no other point beats on both step time and memory; each front "
                  "point is labelled with its point_index, its grid values, its peak memory "
                  "and step time." + note)


def tables(res):
    summary = res.group("sweep/summary")
    if summary is None:
        return []
    return [group_table(summary, SECTION, "Points (/sweep/summary)", transpose_upto=0)]
