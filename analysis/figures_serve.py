"""Figures and tables of `vramsim serve` files: latency CDFs from /serve/requests, KV-cache use
and queue lengths over time from /serve/timeseries (per replica), the /serve/summary table."""

import numpy as np
from matplotlib.ticker import MaxNLocator

import vramsim_results as vr
from figure_common import (Figure, Skipped, TALL, Table, WIDE, finish, fmt_number, new_figure,
                           save, time_axis)

SECTION = "Serving"
# Replicas drawn as separate lines; beyond this many the first ones are drawn and the caption
# says so (64 overlapping lines read as one blur).
MAX_REPLICA_LINES = 8


def render(res, outdir, max_points):
    """Every serving figure this file allows: a list of Figure / Skipped records."""
    out = []
    requests = res.group("serve/requests")
    timeseries = res.group("serve/timeseries")
    if requests is None:
        out.append(Skipped(SECTION, "Latency CDFs", "the file has no /serve/requests table"))
    else:
        out.append(latency_cdfs(requests, outdir, max_points))
    if timeseries is None:
        out.append(Skipped(SECTION, "KV-cache use and queue lengths over time",
                           "the file has no /serve/timeseries table"))
    elif not vr.has_columns(timeseries, "time_ns", "replica"):
        out.append(Skipped(SECTION, "KV-cache use and queue lengths over time",
                           "/serve/timeseries lacks the time or replica column"))
    else:
        series = _Timeseries(timeseries)
        out.append(kv_usage(res, series, outdir, max_points))
        out.append(queue_lengths(series, outdir, max_points))
    return out


def _cdf_points(values, max_points):
    """(sorted values, cumulative fraction) with at most max_points points, quantile-spaced."""
    v = np.sort(values)
    n = len(v)
    frac = np.arange(1, n + 1, dtype=np.float64) / n
    if n > max_points:
        idx = np.unique(np.linspace(0, n - 1, max_points).astype(np.int64))
        return v[idx], frac[idx]
    return v, frac


def _latency_unit(*values_s):
    """One unit for request latencies (TTFT and E2E together): milliseconds when every 99th
    percentile is under a second, else seconds. Per-token times (TPOT) are always in ms."""
    p99 = [np.percentile(v, 99) for v in values_s if len(v)]
    if p99 and max(p99) < 1.0:
        return 1e3, "ms"
    return 1.0, "s"


def latency_cdfs(requests, outdir, max_points):
    title = "Latency CDFs: TTFT, TPOT and end-to-end"
    needed = ("status", "arrival_ns", "first_token_ns", "finish_ns", "output_tokens")
    if not vr.has_columns(requests, *needed):
        return Skipped(SECTION, title, "/serve/requests lacks one of " + ", ".join(needed))
    status = vr.column(requests, "status")
    done = status == 0
    if not np.any(done):
        return Skipped(SECTION, title, "no request finished (all rejected)")
    arrival = vr.column(requests, "arrival_ns")[done]
    first = vr.column(requests, "first_token_ns")[done]
    finished_at = vr.column(requests, "finish_ns")[done]
    out_tokens = vr.column(requests, "output_tokens")[done]
    replica = vr.column(requests, "replica")
    replica = replica[done] if replica is not None else np.zeros(len(arrival), np.int64)
    multi = out_tokens > 1
    metrics = [
        ("TTFT", (first - arrival) / vr.NS_PER_S, np.ones(len(arrival), bool)),
        ("TPOT", (finished_at - first) / np.maximum(out_tokens - 1, 1) / vr.NS_PER_S, multi),
        ("E2E latency", (finished_at - arrival) / vr.NS_PER_S, np.ones(len(arrival), bool)),
    ]
    replicas = np.unique(replica)
    per_replica = 1 < len(replicas) <= MAX_REPLICA_LINES
    request_unit = _latency_unit(metrics[0][1], metrics[2][1])
    units = {"TTFT": request_unit, "TPOT": (1e3, "ms"), "E2E latency": request_unit}
    fig, axes = new_figure(WIDE, 1, 3)
    for ax, (name, values, mask) in zip(axes, metrics):
        vals = values[mask]
        scale, unit = units[name]
        ax.set_title(f"{name} ({unit})")
        ax.set_ylabel("cumulative fraction of requests (0-1)")
        ax.set_ylim(0, 1.005)
        if len(vals) == 0:
            ax.text(0.5, 0.5, "no request with\nmore than one token", ha="center",
                    transform=ax.transAxes)
            ax.set_xlabel(f"{name} ({unit})")
            continue
        x, y = _cdf_points(vals * scale, max_points)
        ax.plot(x, y, drawstyle="steps-post", color="black", lw=1.8,
                label=f"all ({len(vals):,})")
        if per_replica:
            for r in replicas:
                sel = vals[replica[mask] == r] * scale
                if len(sel):
                    xr, yr = _cdf_points(sel, max_points)
                    ax.plot(xr, yr, drawstyle="steps-post", lw=0.9, alpha=0.8,
                            label=f"replica {r}")
        for q, style in ((50, ":"), (99, "--")):
            p = np.percentile(vals * scale, q, method="inverted_cdf")
            ax.axvline(p, color="grey", ls=style, lw=1, label=f"p{q} = {p:.3g} {unit}")
        ax.set_xlabel(f"{name} ({unit})")
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(f"Latency CDFs of {len(arrival):,} finished requests (TTFT and E2E in "
                 f"{request_unit[1]}, TPOT in ms)")
    finish(fig)
    name = save(fig, outdir, "serve_latency_cdf.png")
    caption = ("Exact empirical CDFs from /serve/requests: TTFT = first_token_ns - arrival_ns, "
               "TPOT = (finish_ns - first_token_ns) / (output_tokens - 1) for outputs of more "
               "than one token, E2E = finish_ns - arrival_ns. Rejected requests are left out.")
    return Figure(SECTION, name, title, caption)


def _num_kv_blocks(res):
    """KV blocks of one replica: /serve/summary kv_num_blocks, else /budget num_gpu_blocks."""
    summary = res.group("serve/summary")
    for group, name in ((summary, "kv_num_blocks"), (res.group("budget"), "num_gpu_blocks")):
        values = vr.column(group, name)
        if values is not None and len(values) and values[0] > 0:
            return int(values[0])
    return None


class _Timeseries:
    """/serve/timeseries split by replica, reading `time` and `replica` once; value columns are
    read one at a time and downsampled per replica, so a 25-million-row table needs about three
    columns in memory at once."""

    def __init__(self, timeseries):
        self.group = timeseries
        self.time = vr.column(timeseries, "time_ns")
        replica = vr.column(timeseries, "replica")
        ids = vr.replica_ids(replica)
        self.total = len(ids)
        if len(ids) == 1:
            self.rows = {int(ids[0]): None}  # every row: no index array, no copy
        else:
            self.rows = {int(r): np.flatnonzero(replica == r) for r in ids[:MAX_REPLICA_LINES]}
        self.t_max_s = float(self.time.max()) / vr.NS_PER_S if len(self.time) else 0.0

    def lines(self, name, max_points, scale_s):
        """(replica, time in units of scale_s seconds, values) per drawn replica, downsampled."""
        values = vr.column(self.group, name)
        for r, rows in self.rows.items():
            y = values if rows is None else values[rows]
            keep = vr.envelope_indices(y, max_points)
            idx = keep if rows is None else rows[keep]
            yield r, self.time[idx] / vr.NS_PER_S / scale_s, y[keep].astype(np.float64)

    def note(self):
        shown = len(self.rows)
        return "" if shown >= self.total else \
            f" Replicas 0-{shown - 1} of {self.total} are drawn."


def kv_usage(res, series, outdir, max_points):
    title = "KV-cache use over time"
    if not vr.has_columns(series.group, "kv_used_blocks"):
        return Skipped(SECTION, title, "/serve/timeseries lacks kv_used_blocks")
    blocks = _num_kv_blocks(res)
    scale, unit = time_axis(series.t_max_s)
    fig, ax = new_figure(WIDE)
    peak = 0.0
    for r, t, y in series.lines("kv_used_blocks", max_points, scale):
        if blocks:
            y = 100.0 * y / blocks
        peak = max(peak, float(y.max()) if len(y) else 0.0)
        ax.plot(t, y, drawstyle="steps-post", lw=0.8, label=f"replica {r}")
    if blocks:
        ax.set_ylabel(f"KV blocks used (% of {blocks:,} per replica)")
        if peak >= 50.0:
            ax.axhline(100.0, color="red", ls="--", lw=1, label="capacity (100%)")
        # Zoomed to the data when far below capacity; the title gives the peak.
        ax.set_ylim(0, min(max(peak * 1.15, 1.0), 105.0) if peak < 50.0 else 105.0)
    else:
        ax.set_ylabel("KV blocks used (blocks)")
        ax.set_ylim(bottom=0)
    ax.set_xlabel(f"simulated time ({unit})")
    peak_text = f"peak {peak:.1f}% of capacity" if blocks else f"peak {peak:,.0f} blocks"
    ax.set_title(f"KV-cache blocks referenced by requests, per replica ({peak_text})")
    ax.legend(fontsize=8, loc="upper right")
    finish(fig)
    name = save(fig, outdir, "serve_kv_cache.png")
    caption = ("kv_used_blocks from /serve/timeseries at the start of each step; long series "
               "keep each interval's minimum and maximum." + series.note())
    return Figure(SECTION, name, title, caption)


def queue_lengths(series, outdir, max_points):
    title = "Running and waiting requests over time"
    if not vr.has_columns(series.group, "num_running", "num_waiting"):
        return Skipped(SECTION, title, "/serve/timeseries lacks num_running or num_waiting")
    scale, unit = time_axis(series.t_max_s)
    fig, axes = new_figure(TALL, 2, 1, sharex=True)
    for ax, col, label in ((axes[0], "num_running", "running (admitted, not finished)"),
                           (axes[1], "num_waiting", "waiting (queued, preempted or swapped)")):
        top = 0.0
        for r, t, y in series.lines(col, max_points, scale):
            ax.plot(t, y, drawstyle="steps-post", lw=0.8, label=f"replica {r}")
            top = max(top, float(y.max()) if len(y) else 0.0)
        ax.set_ylabel("requests (count)")
        ax.set_title(f"Requests {label}")
        ax.set_ylim(0, max(top * 1.05, 1.0))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=8, loc="upper right")
    axes[1].set_xlabel(f"simulated time ({unit})")
    finish(fig)
    name = save(fig, outdir, "serve_queues.png")
    caption = ("num_running and num_waiting from /serve/timeseries, per replica; long series "
               "keep each interval's minimum and maximum." + series.note())
    return Figure(SECTION, name, title, caption)


def tables(res):
    """The /serve/summary row as a field / value / units table, and the /serve attributes."""
    out = []
    serve = res.group("serve")
    if serve is not None and serve.attrs:
        rows = [[k, vr.text(serve.attrs[k])] for k in sorted(serve.attrs)]
        out.append(Table(SECTION, "Run", ["attribute", "value"], rows))
    summary = res.group("serve/summary")
    if summary is not None and vr.num_rows(summary) > 0:
        rows = []
        for name in vr.columns(summary):
            u = vr.units(summary, name)
            rows.append([name, fmt_number(vr.column(summary, name, 0), u), u])
        out.append(Table(SECTION, "Summary (/serve/summary)", ["field", "value", "units"], rows,
                         "Percentiles come from a histogram (within 0.4%); the CDFs above are "
                         "exact."))
    return out
