#!/usr/bin/env python3
"""Print a vramsim results file: its attributes, then every table with units and first rows.

Usage: python3 analysis/summarize.py RESULTS.h5 [--rows N] [--width N]

Needs h5py (which brings numpy); nothing else. The file layout is analysis/SCHEMA.md.
Exit codes: 0 printed, 2 bad input (missing file, not HDF5), 3 h5py not installed.
"""

import argparse
import sys

try:
    import h5py
except ImportError:  # pragma: no cover - depends on the environment
    h5py = None

H5PY_MISSING = (
    "summarize.py needs the h5py package to read HDF5 files.\n"
    "Install it with `python3 -m pip install h5py` or, on Debian/Ubuntu,\n"
    "`apt install python3-h5py`."
)


def text(value):
    """An attribute or cell as text: bytes decoded, arrays joined, numpy scalars unwrapped."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list):
        return "[" + ", ".join(text(v) for v in value) + "]"
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def shorten(s, width):
    """One line of at most `width` characters; multi-line text shows its first line."""
    lines = s.splitlines() or [""]
    first = lines[0]
    more = len(lines) > 1
    if len(first) > width:
        first = first[: max(width - 3, 0)] + "..."
    elif more:
        first += f"  ... ({len(lines)} lines)"
    return first


def print_attributes(obj, indent, width):
    for name in sorted(obj.attrs):
        print(f"{indent}{name} = {shorten(text(obj.attrs[name]), width)}")


def column_order(group):
    """The `columns` attribute if present (written order), else datasets alphabetically."""
    names = [k for k in group if isinstance(group[k], h5py.Dataset)]
    if "columns" in group.attrs:
        ordered = [text(c) for c in group.attrs["columns"]]
        return [c for c in ordered if c in names] + [c for c in names if c not in ordered]
    return sorted(names)


def column_values(ds, rows):
    """The first `rows` values as strings, decoding string columns."""
    if ds.ndim != 1:
        return None
    head = ds[: min(rows, ds.shape[0])]
    return [text(v) for v in head]


def column_stats(ds):
    if ds.ndim != 1 or ds.shape[0] == 0 or ds.dtype.kind not in "iuf":
        return ""
    data = ds[:]
    return f"min {text(data.min())}, max {text(data.max())}, mean {float(data.mean()):.6g}"


def print_table(group, indent, rows, width):
    names = column_order(group)
    if not names:
        return
    lengths = {group[n].shape[0] if group[n].ndim == 1 else -1 for n in names}
    num_rows = lengths.pop() if len(lengths) == 1 else None
    print(f"{indent}table: {len(names)} columns, "
          f"{num_rows if num_rows is not None else 'unequal'} rows")
    for name in names:
        ds = group[name]
        units = text(ds.attrs["units"]) if "units" in ds.attrs else "(no units attribute)"
        units = f'"{units}"'
        stats = column_stats(ds)
        print(f"{indent}  {name:<24} {str(ds.dtype):<8} units {units:<8} {stats}")
    shown = min(rows, num_rows or 0)
    if shown == 0:
        return
    cells = {n: column_values(group[n], shown) or [""] * shown for n in names}
    widths = {n: min(max(len(n), *(len(c) for c in cells[n])), width) for n in names}
    print(indent + "  " + "  ".join(n[: widths[n]].rjust(widths[n]) for n in names))
    for i in range(shown):
        row = (shorten(cells[n][i], widths[n]).rjust(widths[n]) for n in names)
        print(indent + "  " + "  ".join(row))
    if num_rows > shown:
        print(f"{indent}  ... {num_rows - shown} more rows")


def visit(group, depth, rows, width):
    indent = "  " * depth
    print_attributes(group, indent + "@", width)
    print_table(group, indent, rows, width)
    for name in sorted(group):
        child = group[name]
        if isinstance(child, h5py.Group):
            print(f"{indent}{child.name}/")
            visit(child, depth + 1, rows, width)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a results file written with --out")
    parser.add_argument("--rows", type=int, default=10, help="rows shown per table (10)")
    parser.add_argument("--width", type=int, default=60, help="widest cell or attribute (60)")
    args = parser.parse_args(argv)
    if h5py is None:
        print(H5PY_MISSING, file=sys.stderr)
        return 3
    try:
        f = h5py.File(args.results, "r")
    except OSError as e:
        print(f"summarize.py: cannot open results file '{args.results}': {e}", file=sys.stderr)
        return 2
    with f:
        print(f"{args.results}")
        visit(f, 0, max(args.rows, 0), max(args.width, 8))
    return 0


if __name__ == "__main__":
    sys.exit(main())
