#!/usr/bin/env python3
"""Render a vramsim results file as PNG figures and one index.html page that shows them with
the run's attributes and summary tables.

Usage: python3 analysis/report.py RESULTS.h5 [-o DIR] [--max-points N]
       (or `vramsim report RESULTS.h5 -o DIR`, which runs this script)

The page opens with the answer (budget: fits, KV tokens and concurrency; serve: throughput,
TTFT/TPOT p50/p99, goodput within the SLOs; train: fits, step time, tokens/s, MFU, peak memory
per pipeline stage; compare: the verdict; capacity: the capacity found; sweep: the best
points), then the run's attributes, the figures and the tables.

What is drawn depends on what the file holds (analysis/SCHEMA.md): /serve (latency CDFs,
KV-cache use and queue lengths over time), /train (memory by category over the step, op
timeline, step-time split), /budget (a stacked bar per device), /compare (the verdict and one
bar per option), /sweep (Pareto fronts), /capacity (the probes of a capacity search against the
SLOs; the capacity per checkpointing policy), /max_micro_batch (peak memory per probe and the
largest micro-batch per policy). A figure the file cannot support is listed on the page
with the reason. The page is plain HTML with inline CSS: no JavaScript, no network.

Needs h5py, numpy and matplotlib (Debian: python3-h5py python3-matplotlib; scripts/setup.sh
installs them). Exit codes: 0 written, 1 a figure failed (the page lists it), 2 bad input
(missing file, not HDF5), 3 a required Python package is missing.
"""

import argparse
import html
import json
import os
import sys
import time
import traceback

MISSING = []
for _module in ("numpy", "h5py", "matplotlib"):
    try:
        __import__(_module)
    except ImportError:  # pragma: no cover - depends on the environment
        MISSING.append(_module)

INSTALL_HINT = (
    "Install them with scripts/setup.sh, or on Debian/Ubuntu:\n"
    "  sudo apt-get install python3-h5py python3-matplotlib python3-pandas\n"
    "or with pip: python3 -m pip install h5py matplotlib pandas")

# Tables listed in "The file" section; a sweep can hold a detailed group per point.
MAX_OVERVIEW_ROWS = 100

RUN_ATTRIBUTES = ("created_by", "command", "vramsim_version", "schema_version", "seed",
                  "calibration_source")

CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1100px; color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 2px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }
h3 { margin-bottom: 0.3em; }
figure { margin: 1em 0 2em 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em 0; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f4f4f4; }
td:first-child, th:first-child { text-align: left; }
.wide { overflow-x: auto; max-height: 40em; overflow-y: auto; }
.skipped { color: #8a6d3b; background: #fcf8e3; padding: 0.4em 0.8em; border-radius: 4px; }
.error { color: #a94442; background: #f2dede; padding: 0.4em 0.8em; border-radius: 4px; }
.note { color: #555; font-size: 0.9em; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
code { background: #f4f4f4; padding: 0 0.2em; }
.answer { background: #eef6ee; border: 1px solid #b7d7b7; border-radius: 6px;
          padding: 0.6em 1.2em; margin-bottom: 1.5em; }
.answer .what { color: #555; margin: 0.2em 0; }
.answer .headline { font-size: 1.15em; margin: 0.3em 0; }
"""


def esc(s):
    return html.escape(str(s), quote=True)


def table_html(table):
    out = [f"<h3>{esc(table.title)}</h3>", '<div class="wide"><table>', "<tr>"]
    out += [f"<th>{esc(h)}</th>" for h in table.headers]
    out.append("</tr>")
    for row in table.rows:
        out.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>")
    out.append("</table></div>")
    if table.note:
        out.append(f'<p class="note">{esc(table.note)}</p>')
    return "\n".join(out)


def figure_html(item):
    from figure_common import Figure

    if isinstance(item, Figure):
        return (f'<figure><h3>{esc(item.title)}</h3>'
                f'<img src="{esc(item.file)}" alt="{esc(item.title)}">'
                f"<figcaption>{esc(item.caption)}</figcaption></figure>")
    css = "error" if item.reason.startswith("error") else "skipped"
    return (f'<p class="{css}"><b>{esc(item.title)}</b>: not drawn: {esc(item.reason)}</p>')


def run_facts(res):
    """Model and GPU from the group attributes or the inputs JSON."""
    inputs = res.inputs()
    facts = {}
    for key in ("model", "gpu"):
        for path in ("serve", "train", "budget", "compare", "sweep", "capacity",
                     "max_micro_batch"):
            g = res.group(path)
            if g is not None and key in g.attrs:
                facts[key] = str(g.attrs[key])
                break
        else:
            if key in inputs:
                facts[key] = str(inputs[key])
    return facts


def tables_overview(res):
    """Every table group in the file, with its rows and columns (a map of the file)."""
    import h5py

    import vramsim_results as vr
    from figure_common import Table

    rows = []

    def visit(name, obj):
        if isinstance(obj, h5py.Group) and "columns" in obj.attrs:
            rows.append([f"/{name}", f"{vr.num_rows(obj):,}", ", ".join(vr.columns(obj))])

    res.file.visititems(visit)
    note = ""
    if len(rows) > MAX_OVERVIEW_ROWS:  # e.g. a sweep with a detailed group per point
        note = f"First {MAX_OVERVIEW_ROWS} of {len(rows):,} tables."
        rows = rows[:MAX_OVERVIEW_ROWS]
    return Table("", "Tables in this file", ["group", "rows", "columns"], rows, note)


def render_all(res, outdir, max_points):
    """(figures and skipped records, tables, errors) for every part of the file."""
    import figures_budget
    import figures_capacity
    import figures_compare
    import figures_max_micro_batch
    import figures_serve
    import figures_sweep
    import figures_train
    from figure_common import Skipped

    modules = {"capacity": figures_capacity, "max_micro_batch": figures_max_micro_batch,
               "compare": figures_compare, "sweep": figures_sweep, "serve": figures_serve,
               "train": figures_train, "budget": figures_budget}
    items, tables, errors, bad_data = [], [], [], []
    for kind in res.kinds:
        module = modules[kind]
        try:
            items.extend(module.render(res, outdir, max_points))
        except bad_data_types() as e:  # the file's data, not the code: one line, exit 2
            bad_data.append(f"{kind}: {bad_data_message(e)}")
            items.append(Skipped(module.SECTION, f"{kind} figures", f"bad data: {e}"))
        except Exception as e:  # a bug in a figure: keep the page, report it, exit 1
            traceback.print_exc()
            errors.append(f"{kind}: {type(e).__name__}: {e}")
            items.append(Skipped(module.SECTION, f"{kind} figures", f"error: {e}"))
        try:
            tables.extend(module.tables(res))
        except bad_data_types() as e:
            bad_data.append(f"{kind} tables: {bad_data_message(e)}")
        except Exception as e:
            traceback.print_exc()
            errors.append(f"{kind} tables: {type(e).__name__}: {e}")
    return items, tables, errors, bad_data


def bad_data_types():
    """What a file's data raises while read (not a bug of the figures): vramsim_results'
    ResultsError (a dataset of the wrong type or shape), OSError (h5py on a corrupted chunk or
    a broken link), KeyError (a missing dataset or attribute), and the TypeError, ValueError and
    IndexError of numpy on values of the wrong type or length."""
    import vramsim_results as vr

    return (vr.ResultsError, OSError, KeyError, TypeError, ValueError, IndexError)


def bad_data_message(e):
    """One line for an exception raised by a file's data."""
    import vramsim_results as vr

    line = str(e).splitlines()[0] if str(e) else ""
    if isinstance(e, vr.ResultsError):
        return line
    if isinstance(e, KeyError):
        return f"missing dataset or attribute {line}"
    return f"{type(e).__name__}: {line}"


# --- the answer at the top of the page ------------------------------------------------------
# Each kind's answer is a list of sentences and small tables (figure_common.Table) with the
# numbers a reader acts on; page() puts them first, before the run's attributes and the figures.

def num(value, digits=3):
    """A number for a sentence: thousands with separators, smaller values to `digits`
    significant digits; NaN and None as "n/a"."""
    if value is None:
        return "n/a"
    v = float(value)
    if v != v:
        return "n/a"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.{digits}g}"


def gib_text(value_bytes):
    return f"{float(value_bytes) / (1 << 30):.2f} GiB"


def ms_text(value_s):
    return f"{num(float(value_s) * 1e3)} ms"


def _row(group):
    """Row 0 of a one-row table group as {column: value}."""
    import vramsim_results as vr

    if group is None or vr.num_rows(group) == 0:
        return {}
    return {c: vr.column(group, c, 0) for c in vr.columns(group)}


def _rows(group):
    import vramsim_results as vr

    if group is None:
        return []
    names = vr.columns(group)
    cols = {c: vr.column(group, c) for c in names}
    return [{c: cols[c][i] for c in names} for i in range(vr.num_rows(group))]


def _slo_text(res):
    """The SLOs of a serve run as "TTFT ≤ 1s, TPOT ≤ 50ms", or "" when none was given."""
    settings = res.inputs().get("settings", {})
    given = []
    for key, label in (("slo.ttft", "TTFT"), ("slo.tpot", "TPOT"), ("slo.e2e", "E2E")):
        value = settings.get(key, {}).get("value") if isinstance(settings, dict) else None
        if value not in (None, "", 0):
            given.append(f"{label} ≤ {value}")
    return ", ".join(given)


def answer_serve(res):
    from figure_common import Table

    s = _row(res.group("serve/summary"))
    if not s:
        return ["The file has no /serve/summary row."], []
    replicas = res.inputs().get("replicas", 1)
    on = f" on {replicas} replicas" if isinstance(replicas, int) and replicas > 1 else ""
    lines = [f"Throughput{on}: {num(s.get('throughput_requests_per_s'))} requests/s, "
             f"{num(s.get('throughput_output_tokens_per_s'))} output tokens/s "
             f"({num(s.get('num_finished'))} of {num(s.get('num_requests'))} requests "
             f"finished in {num(s.get('duration_s'))} s)."]
    lines.append(f"TTFT p50 {ms_text(s.get('ttft_p50_s', float('nan')))}, p99 "
                 f"{ms_text(s.get('ttft_p99_s', float('nan')))}; TPOT p50 "
                 f"{ms_text(s.get('tpot_p50_s', float('nan')))}, p99 "
                 f"{ms_text(s.get('tpot_p99_s', float('nan')))}.")
    slos = _slo_text(res)
    finished = int(s.get("num_finished", 0))
    good = int(s.get("num_good", 0))
    share = f"{100.0 * good / finished:.1f}%" if finished else "n/a"
    if slos:
        lines.append(f"Goodput within the SLOs ({slos}): "
                     f"{num(s.get('goodput_requests_per_s'))} requests/s, {num(good)} of "
                     f"{num(finished)} finished requests ({share}).")
    else:
        lines.append(f"Goodput: {num(s.get('goodput_requests_per_s'))} requests/s "
                     "(no SLO was given, so every finished request counts).")
    rows = []
    for name, label in (("ttft", "TTFT (ms)"), ("tpot", "TPOT (ms)"), ("itl", "ITL (ms)"),
                        ("e2e", "E2E latency (ms)")):
        if f"{name}_p50_s" in s:
            rows.append([label] + [num(float(s.get(f"{name}_{q}_s", float("nan"))) * 1e3)
                                   for q in ("mean", "p50", "p90", "p99")])
    tables = [Table("", "Latency", ["metric", "mean", "p50", "p90", "p99"], rows,
                    "All in milliseconds (ms); the summary's histogram percentiles.")]
    return lines, tables


def answer_budget(res):
    from figure_common import Table

    import vramsim_results as vr

    budget = res.group("budget")
    rows = _rows(budget)
    if not rows:
        return ["The file has no /budget row."], []
    first = rows[0]
    inputs = res.inputs() if res.kinds and res.kinds[0] == "budget" else {}
    fits = bool(vr.attr(budget, "fits", first.get("fits", 0)))
    lines = []
    if fits:
        margin = inputs.get("margin_bytes")
        share = inputs.get("margin_share_of_usable")
        tail = ""
        if isinstance(margin, (int, float)) and isinstance(share, (int, float)):
            tail = (f": beyond one request of max_model_len tokens the KV cache has "
                    f"{gib_text(margin)} ({100.0 * share:.1f}% of usable memory) to spare")
            if inputs.get("knife_edge"):
                tail += " (knife-edge: a few percent of growth would not fit)"
        lines.append(f"Fits{tail}.")
    else:
        lines.append("Does not fit: " + (vr.attr(budget, "reason", "") or "no reason recorded"))
    max_len = res.inputs().get("max_model_len")
    per = f" of {num(max_len)} tokens" if isinstance(max_len, int) else ""
    lines.append(f"KV cache: {num(first.get('kv_cache_tokens'))} tokens "
                 f"({num(first.get('num_gpu_blocks'))} blocks); max concurrency "
                 f"{num(first.get('max_concurrency'))} requests{per} at once.")
    cols = (("weights_bytes", "weights (GiB)"),
            ("activation_peak_bytes", "activation peak (GiB)"),
            ("kv_cache_bytes", "KV cache (GiB)"), ("usable_memory_bytes", "usable (GiB)"),
            ("total_memory_bytes", "device memory (GiB)"))
    cols = [c for c in cols if c[0] in first]
    table_rows = [[num(r.get("device_index")), num(r.get("pp_stage")), num(r.get("tp_rank"))]
                  + [f"{float(r[c]) / (1 << 30):.2f}" for c, _ in cols] for r in rows]
    return lines, [Table("", "Per device", ["device", "pp stage", "tp rank"]
                         + [h for _, h in cols], table_rows,
                         "GiB = 2^30 bytes. KV tokens and concurrency are the engine's: the "
                         "fewest blocks over its devices.")]


def answer_train(res):
    from figure_common import Table

    import vramsim_results as vr

    train = res.group("train")
    devices = _rows(res.group("train/devices"))
    fits = bool(vr.attr(train, "fits", 0))
    lines = [("Fits on every pipeline stage." if fits else
              "Does not fit: " + ", ".join(f"stage {int(d['device'])}" for d in devices
                                           if not d.get("fits", 1)) +
              " exceed the device memory.")]
    mfu = vr.attr(train, "mfu")
    lines.append(f"Step time {num(vr.attr(train, 'step_time_s'))} s, "
                 f"{num(vr.attr(train, 'tokens_per_s'))} tokens/s, MFU "
                 f"{100.0 * float(mfu):.1f}%." if mfu is not None else
                 f"Step time {num(vr.attr(train, 'step_time_s'))} s.")
    memory = res.inputs().get("total_memory_bytes")
    rows = []
    for d in devices:
        need = int(d.get("peak_reserved_bytes", 0)) + int(d.get("non_allocator_bytes", 0))
        rows.append([num(d.get("device")),
                     f"{float(d.get('peak_allocated_bytes', 0)) / (1 << 30):.2f}",
                     f"{need / (1 << 30):.2f}",
                     f"{float(memory) / (1 << 30):.2f}" if isinstance(memory, (int, float))
                     else "n/a", "yes" if d.get("fits", 1) else "no"])
    return lines, [Table("", "Peak memory per pipeline stage",
                         ["pipeline stage", "peak allocated (GiB)",
                          "peak reserved + CUDA context and NCCL (GiB)", "device memory (GiB)",
                          "fits"], rows, "GiB = 2^30 bytes.")]


def answer_compare(res):
    import vramsim_results as vr

    verdict = vr.attr(res.group("compare"), "verdict", "")
    return [f"Verdict: {verdict}" if verdict else "The file records no verdict."], []


def _policy_table(group, columns):
    """A table of a policies group: (column, header, formatter) per column present."""
    from figure_common import Table

    rows = _rows(group)
    present = [c for c in columns if rows and c[0] in rows[0]]
    return Table("", "Per checkpointing policy", [h for _, h, _ in present],
                 [[f(r[c]) for c, _, f in present] for r in rows])


def _best_policy_line(group, what):
    rows = _rows(group)
    if not rows:
        return "The file has no policy rows."
    best = max(rows, key=lambda r: int(r.get("max_micro_batch", 0)))
    if int(best.get("max_micro_batch", 0)) <= 0:
        return f"No checkpointing policy fits even micro-batch 1{what}."
    return (f"Largest micro-batch{what}: {num(best['max_micro_batch'])} sequences with "
            f"checkpointing {vr_text(best['checkpointing'])}"
            + (f", {num(best['tokens_per_s'])} tokens/s" if "tokens_per_s" in best else "")
            + ".")


def vr_text(value):
    import vramsim_results as vr

    return vr.text(value)


def answer_capacity(res):
    import vramsim_results as vr

    cap = res.group("capacity")
    if vr.attr(cap, "mode", "") == "serve":
        found = float(vr.attr(cap, "max_rate_per_s", 0.0))
        slos = [f"{label} ≤ {ms_text(vr.attr(cap, key))}"
                for key, label in (("slo_ttft_p99_s", "p99 TTFT"),
                                   ("slo_tpot_p99_s", "p99 TPOT"), ("slo_e2e_p99_s", "p99 E2E"))
                if vr.attr(cap, key) is not None and float(vr.attr(cap, key)) > 0]
        within = f" within the SLOs ({', '.join(slos)})" if slos else ""
        lines = [f"Capacity: {num(found, 4)} requests/s{within}." if found > 0 else
                 f"Capacity: no rate tried meets the SLOs{within}."]
        high = float(vr.attr(cap, "bracket_high_per_s", 0.0))
        if high > 0:
            lines.append(f"The search's bracket: {num(vr.attr(cap, 'bracket_low_per_s'), 4)} "
                         f"to {num(high, 4)} requests/s "
                         f"({num(vr.attr(cap, 'num_simulations'))} simulations).")
        best = int(vr.attr(cap, "best_max_num_seqs", 0))
        if best > 0:
            lines.append(f"Best max_num_seqs at that rate: {best}.")
        return lines, []
    policies = res.group("capacity/policies")
    line = _best_policy_line(policies, f" at seq_len {num(vr.attr(cap, 'seq_len'))}")
    table = _policy_table(policies, (
        ("checkpointing", "checkpointing", vr_text),
        ("max_micro_batch", "largest micro-batch (sequences)", num),
        ("max_seq_len", "longest sequence at micro-batch 1 (tokens)", num),
        ("tokens_per_s", "tokens/s at the largest micro-batch", num)))
    return [line], [table]


def answer_max_micro_batch(res):
    import vramsim_results as vr

    group = res.group("max_micro_batch")
    policies = res.group("max_micro_batch/policies")
    line = _best_policy_line(policies, f" at seq_len {num(vr.attr(group, 'seq_len'))}")
    table = _policy_table(policies, (
        ("checkpointing", "checkpointing", vr_text),
        ("max_micro_batch", "largest micro-batch (sequences)", num),
        ("peak_reserved_bytes", "peak reserved (GiB)",
         lambda v: f"{float(v) / (1 << 30):.2f}"),
        ("step_time_s", "step time (s)", num),
        ("tokens_per_s", "tokens/s", num),
        ("mfu", "MFU (%)", lambda v: f"{100.0 * float(v):.1f}")))
    return [line], [table]


def _point_settings(res, summary, i):
    """The grid values of sweep point row `i` as "hardware.gpu=h100-sxm, engine.tp=2"."""
    import vramsim_results as vr

    from figures_sweep import sweep_axes

    return ", ".join(f"{a}={vr.text(vr.column(summary, a, i))}"
                     for a in sweep_axes(res, summary))


def answer_sweep(res):
    import numpy as np

    from figure_common import Table
    import figures_sweep
    import vramsim_results as vr

    summary = res.group("sweep/summary")
    if summary is None or vr.num_rows(summary) == 0:
        return ["The file has no /sweep/summary rows."], []
    n = vr.num_rows(summary)
    ok = figures_sweep._ok_mask(summary, n)
    index = vr.column(summary, "point_index")
    index = index if index is not None else np.arange(n)
    bad = n - int(ok.sum())
    lines = [f"{n - bad} of {n} points ran"
             + (f"; {bad} {'is' if bad == 1 else 'are'} infeasible or failed." if bad else ".")]
    if figures_sweep.THROUGHPUT in summary:
        metrics = [(figures_sweep.THROUGHPUT, "highest output throughput", True),
                   ("goodput_requests_per_s", "highest goodput within the SLOs", True),
                   ("ttft_p99_s", "lowest p99 TTFT", False),
                   ("tpot_p99_s", "lowest p99 TPOT", False)]
        shown = ((figures_sweep.THROUGHPUT, "output tokens/s", num),
                 ("goodput_requests_per_s", "goodput (requests/s)", num),
                 ("ttft_p99_s", "p99 TTFT (ms)", lambda v: num(float(v) * 1e3)),
                 ("tpot_p99_s", "p99 TPOT (ms)", lambda v: num(float(v) * 1e3)))
    elif "step_time_s" in summary:
        metrics = [("step_time_s", "shortest step time", False),
                   ("tokens_per_s", "highest tokens/s", True),
                   ("peak_allocated_bytes", "least peak allocated memory", False)]
        shown = (("step_time_s", "step time (s)", num),
                 ("tokens_per_s", "tokens/s", num),
                 ("peak_allocated_bytes", "peak allocated (GiB)",
                  lambda v: f"{float(v) / (1 << 30):.2f}"))
    else:
        return lines, []
    shown = [s for s in shown if s[0] in summary]
    values = {c: vr.column(summary, c).astype(np.float64) for c, _, _ in shown}
    rows = []
    for col, label, higher in metrics:
        if col not in values:
            continue
        v = values[col]
        good = ok & np.isfinite(v)
        if not np.any(good):
            continue
        cand = np.flatnonzero(good)
        i = int(cand[np.argmax(v[cand])] if higher else cand[np.argmin(v[cand])])
        rows.append([label, f"#{int(index[i])}", _point_settings(res, summary, i)]
                    + [f(values[c][i]) for c, _, f in shown])
        if len(rows) == 1:
            lines.append(f"Best point ({label}): #{int(index[i])}, "
                         f"{_point_settings(res, summary, i)}: "
                         + ", ".join(f"{h} {f(values[c][i])}" for c, h, f in shown) + ".")
    return lines, [Table("", "Best points", ["best by", "point", "settings"]
                         + [h for _, h, _ in shown], rows)]


ANSWERS = {"serve": answer_serve, "budget": answer_budget, "train": answer_train,
           "compare": answer_compare, "capacity": answer_capacity,
           "max_micro_batch": answer_max_micro_batch, "sweep": answer_sweep}


def answer_html(res, facts):
    """The block that opens the page: what ran, then each kind's answer (sentences, then small
    tables), the primary kind (the command's) first."""
    created = str(res.root_attrs().get("created_by", "vramsim"))
    what = " on ".join(facts[k] for k in ("model", "gpu") if k in facts)
    out = ['<section class="answer" id="answer">',
           f'<p class="what">{esc(created)}{": " + esc(what) if what else ""}</p>']
    for kind in res.kinds:
        lines, tables = ANSWERS[kind](res)
        label = "" if kind == res.kinds[0] else f"<b>{esc(kind.replace('_', ' '))}:</b> "
        for i, line in enumerate(lines):
            out.append(f'<p class="headline">{label if i == 0 else ""}{esc(line)}</p>')
        out += [table_html(t) for t in tables]
    out.append("</section>")
    return "\n".join(out)


def page(res, items, tables):
    import vramsim_results as vr

    attrs = res.root_attrs()
    facts = run_facts(res)
    name = os.path.basename(res.path)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>vramsim report: {esc(name)}</title>", f"<style>{CSS}</style></head><body>",
           answer_html(res, facts), f"<h1>vramsim report: {esc(name)}</h1>"]
    headline = " on ".join(facts[k] for k in ("model", "gpu") if k in facts)
    if headline:
        out.append(f"<p><b>{esc(headline)}</b></p>")
    out.append("<table>")
    for key in RUN_ATTRIBUTES:
        if key in attrs:
            value = f"<code>{esc(attrs[key])}</code>" if key == "command" else esc(attrs[key])
            out.append(f"<tr><th>{esc(key)}</th><td style='text-align:left'>{value}</td></tr>")
    out.append("</table>")
    if not res.kinds:
        out.append('<p class="skipped">This file holds none of the groups the report draws '
                   f'({", ".join("/" + k for k in vr.KNOWN_GROUPS)}).</p>')
    sections = []
    for x in list(items) + list(tables):
        if x.section not in sections:
            sections.append(x.section)
    for section in sections:
        out.append(f"<h2>{esc(section)}</h2>")
        out += [figure_html(x) for x in items if x.section == section]
        out += [table_html(t) for t in tables if t.section == section]
    out.append("<h2>The file</h2>")
    out.append(table_html(tables_overview(res)))
    inputs = res.inputs()
    if inputs:
        out.append("<details><summary>Resolved inputs (<code>inputs</code>)</summary><pre>"
                   f"{esc(json.dumps(inputs, indent=2))}</pre></details>")
    if attrs.get("scenario_text"):
        out.append("<details><summary>Scenario file (<code>scenario_text</code>)</summary>"
                   f"<pre>{esc(attrs['scenario_text'])}</pre></details>")
    out.append(f'<p class="note">Written by analysis/report.py from {esc(name)}; the tables '
               "and figures follow analysis/SCHEMA.md.</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a results file written with --out")
    parser.add_argument("-o", "--out-dir", help="folder for index.html and the PNGs "
                        "(created if missing; default: RESULTS_report next to the file)")
    parser.add_argument("--max-points", type=int, default=20000,
                        help="most points drawn per line; longer series are downsampled (20000)")
    args = parser.parse_args(argv)
    if MISSING:
        print(f"report.py: missing Python package(s): {', '.join(MISSING)}.\n{INSTALL_HINT}",
              file=sys.stderr)
        return 3
    import vramsim_results as vr

    if not os.path.isfile(args.results):
        print(f"report.py: results file '{args.results}' does not exist", file=sys.stderr)
        return 2
    if os.path.isdir(args.results):
        print(f"report.py: '{args.results}' is a directory, not a results file",
              file=sys.stderr)
        return 2
    try:
        res = vr.Results(args.results)
    except vr.ResultsError as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"report.py: cannot open results file '{args.results}' as HDF5: {first}",
              file=sys.stderr)
        return 2
    outdir = args.out_dir or os.path.splitext(args.results)[0] + "_report"
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        print(f"report.py: cannot create output folder '{outdir}': {e}", file=sys.stderr)
        return 2
    started = time.monotonic()
    with res:
        items, tables, errors, bad_data = render_all(res, outdir, max(args.max_points, 100))
        try:
            text = page(res, items, tables)
        except bad_data_types() as e:
            print(f"report.py: '{args.results}': {bad_data_message(e)}", file=sys.stderr)
            return 2
    index = os.path.join(outdir, "index.html")
    with open(index, "w", encoding="utf-8") as f:
        f.write(text)
    from figure_common import Figure

    drawn = [x.file for x in items if isinstance(x, Figure)]
    skipped = [x for x in items if not isinstance(x, Figure)]
    print(f"report written to {index}: {len(drawn)} figure(s), {len(skipped)} not drawn "
          f"({time.monotonic() - started:.1f} s)")
    for x in skipped:
        print(f"  not drawn: {x.title}: {x.reason}")
    if errors:
        print("report.py: some figures failed:\n  " + "\n  ".join(errors), file=sys.stderr)
        return 1
    if bad_data:
        for line in bad_data:
            print(f"report.py: '{args.results}': {line}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
