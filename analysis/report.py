#!/usr/bin/env python3
"""Render a vramsim results file as PNG figures and one index.html page that shows them with
the run's attributes and summary tables.

Usage: python3 analysis/report.py RESULTS.h5 [-o DIR] [--max-points N]
       (or `vramsim report RESULTS.h5 -o DIR`, which runs this script)

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


def page(res, items, tables):
    import vramsim_results as vr

    attrs = res.root_attrs()
    facts = run_facts(res)
    name = os.path.basename(res.path)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>vramsim report: {esc(name)}</title>", f"<style>{CSS}</style></head><body>",
           f"<h1>vramsim report: {esc(name)}</h1>"]
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
