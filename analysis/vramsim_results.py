"""Reading vramsim results files (analysis/SCHEMA.md).

For users, two calls (pandas needed for `read`):

    import vramsim_results as vr
    df = vr.read("run.h5", "serve/requests")   # a DataFrame; df.attrs["units"][column]
    s = vr.summary("run.h5")                    # the run's headline numbers as a dict
    vr.tables("run.h5")                         # the tables a file holds

`scripts/setup.sh` installs this file for the system Python (/usr/bin/python3), so the import
works from any directory. For the report: what a file holds, its attributes as text, and its
table columns one at a time, decoded. Needs h5py and numpy. Columns are read one dataset at a
time so that a million-row table costs only the columns a figure uses.
"""

import json

import h5py
import numpy as np

# The groups a results file may hold, in the order the report shows them, with the program
# that writes each (SCHEMA.md; compare and sweep follow the contract of issue 6).
KNOWN_GROUPS = ("capacity", "max_micro_batch", "compare", "sweep", "serve", "train", "budget")

# Bytes are stored as bytes; figures show GiB (2**30 B).
BYTES_PER_GIB = float(1 << 30)
NS_PER_S = 1e9
NS_PER_MS = 1e6

# The schema version this module follows (SCHEMA.md), and the columns renamed since an older
# one: schema 2 put the unit into the name of serve's per-request and time-series times
# (`arrival` became `arrival_ns`, int64 ns as before). Files of schema 1 are read too: asking
# for a new name finds the old column.
SCHEMA_VERSION = 2
RENAMED_IN_SCHEMA_2 = {
    "arrival_ns": "arrival",
    "first_scheduled_ns": "first_scheduled",
    "first_token_ns": "first_token",
    "finish_ns": "finish",
    "time_ns": "time",
    "step_latency_ns": "step_latency",
}


def text(value):
    """An attribute or cell as text: bytes decoded, numpy scalars unwrapped, arrays joined."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, list):
        return "[" + ", ".join(text(v) for v in value) + "]"
    return str(value)


def attr(obj, name, default=None):
    """An HDF5 attribute decoded to str / int / float, or `default` when absent."""
    if obj is None or name not in obj.attrs:
        return default
    value = obj.attrs[name]
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if hasattr(value, "tolist"):
        value = value.tolist()
    return value


class ResultsError(Exception):
    """A file that is not a vramsim results file this module can read, or one whose data does
    not have the shape SCHEMA.md gives: bad input, reported in one line (exit 2)."""


def check_vramsim_file(f, path):
    """Raises ResultsError unless `f` is a vramsim results file of a schema version this module
    knows: a `schema_version` attribute, an integer in 1..SCHEMA_VERSION, and (when present) a
    `created_by` naming vramsim."""
    if "schema_version" not in f.attrs:
        raise ResultsError(f"'{path}' is an HDF5 file but not a vramsim results file (no "
                           f"schema_version attribute on its root group)")
    raw = f.attrs["schema_version"]
    value = raw.tolist() if hasattr(raw, "tolist") else raw
    if isinstance(value, bool) or not isinstance(value, int):
        raise ResultsError(f"'{path}': schema_version is {text(raw)!r}, not an integer")
    if not 1 <= value <= SCHEMA_VERSION:
        raise ResultsError(f"'{path}' has schema_version {value}; this report reads versions "
                           f"1 to {SCHEMA_VERSION} (a newer vramsim wrote it?)")
    created_by = attr(f, "created_by", "vramsim")
    if not isinstance(created_by, str) or not created_by.startswith("vramsim"):
        raise ResultsError(f"'{path}': created_by is {text(created_by)!r}, not a vramsim "
                           f"command")


class Results:
    """One opened results file. Use as a context manager; `kinds` lists what it holds. Raises
    OSError when the file is not HDF5 and ResultsError when it is not a vramsim results file of
    a known schema version."""

    def __init__(self, path):
        self.path = str(path)
        self.file = h5py.File(self.path, "r")
        try:
            check_vramsim_file(self.file, self.path)
        except ResultsError:
            self.file.close()
            raise
        self.created_by = attr(self.file, "created_by", "")
        self.schema_version = schema_version(self.file)
        self.kinds = [k for k in KNOWN_GROUPS if k in self.file]
        # A file whose groups are not recognised still says what wrote it.
        if not self.kinds and self.created_by.startswith("vramsim "):
            word = self.created_by.split()[1]
            if word in self.file:
                self.kinds = [word]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.file.close()

    def group(self, path):
        """The group at `path`, or None."""
        obj = self.file.get(path)
        return obj if isinstance(obj, h5py.Group) else None

    def root_attrs(self):
        """The file-level attributes as a dict of text."""
        return {name: text(self.file.attrs[name]) for name in sorted(self.file.attrs)}

    def inputs(self):
        """The file-level `inputs` JSON as a dict ({} when absent or not JSON)."""
        raw = attr(self.file, "inputs", "")
        try:
            value = json.loads(raw) if raw else {}
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


def columns(group):
    """A table group's columns in written order (its `columns` attribute), else alphabetical."""
    names = [k for k in group if isinstance(group[k], h5py.Dataset) and group[k].ndim == 1]
    if "columns" in group.attrs:
        ordered = [text(c) for c in group.attrs["columns"]]
        return [c for c in ordered if c in names] + [c for c in names if c not in ordered]
    return sorted(names)


def num_rows(group):
    """Rows of a table group (the length of its first column; 0 when it has none)."""
    cols = columns(group)
    return group[cols[0]].shape[0] if cols else 0


def units(group, name):
    """The `units` attribute of column `name` ("" when absent)."""
    return attr(group[name], "units", "")


def is_string(ds):
    return ds.dtype.kind in "OSU"


def stored_name(group, name):
    """The dataset that holds column `name` in `group`: `name`, or its schema-1 name in a file
    written before the rename (RENAMED_IN_SCHEMA_2); None when neither is there."""
    if group is None:
        return None
    if name in group:
        return name
    old = RENAMED_IN_SCHEMA_2.get(name)
    if old is not None and old in group and schema_version(group.file) < 2:
        return old
    return None


def schema_version(f):
    """The file's `schema_version` attribute (1 when absent: the first files lacked nothing
    else, so a missing one is treated as the oldest)."""
    value = attr(f, "schema_version", 1)
    try:
        return int(value)
    except (TypeError, ValueError):
        return 1


def column(group, name, selection=slice(None)):
    """Column `name` as a numpy array (strings decoded to str), or None when absent. A name
    renamed in schema 2 is also found under its old name in an older file."""
    name = stored_name(group, name)
    if name is None:
        return None
    ds = group[name]
    if not isinstance(ds, h5py.Dataset) or ds.ndim != 1:
        raise ResultsError(f"{group.name}/{name}: expected a 1-D column dataset, found "
                           f"{'a group' if isinstance(ds, h5py.Group) else f'{ds.ndim}-D data'}")
    if ds.dtype.kind not in "iufbOSU":
        raise ResultsError(f"{group.name}/{name}: a column of HDF5 type {ds.dtype}, not a "
                           f"number or a string")
    if ds.dtype.kind == "O":
        return np.asarray(ds.asstr()[selection], dtype=object)
    values = ds[selection]
    if ds.dtype.kind == "S":
        return np.char.decode(values, "utf-8")
    return values


def has_columns(group, *names):
    return group is not None and all(stored_name(group, n) is not None for n in names)


def read_table(group, names=None):
    """A table group (or the listed columns of it) as a pandas DataFrame, in written order."""
    import pandas as pd

    names = [n for n in (names or columns(group)) if n in group]
    return pd.DataFrame({n: column(group, n) for n in names}, columns=names)


def envelope_indices(y, max_points):
    """Indices of the min and max of `y` in each of about max_points/2 runs of consecutive
    points (plus the first and last point), sorted: a line drawn through them keeps every
    peak and trough of the full series."""
    n = len(y)
    if n <= max_points:
        return np.arange(n)
    bucket = int(np.ceil(n / max(max_points // 2, 1)))
    full = n // bucket
    body = np.asarray(y[: full * bucket]).reshape(full, bucket)  # a view, no copy
    base = np.arange(full, dtype=np.int64) * bucket
    parts = [base + np.argmin(body, axis=1), base + np.argmax(body, axis=1), [0, n - 1]]
    if full * bucket < n:  # the last, shorter run
        tail = np.asarray(y[full * bucket:])
        parts.append([full * bucket + int(np.argmin(tail)), full * bucket + int(np.argmax(tail))])
    return np.unique(np.concatenate(parts).astype(np.int64))


def replica_ids(replica):
    """The distinct replica indices of a column, ascending (bincount: no sort of the column)."""
    if len(replica) == 0:
        return np.zeros(0, np.int64)
    if replica.min() >= 0:
        return np.flatnonzero(np.bincount(replica))
    return np.unique(replica)


def gib(values):
    return np.asarray(values, dtype=np.float64) / BYTES_PER_GIB


# --- the user-facing calls ---------------------------------------------------------------

def _is_table(group):
    return isinstance(group, h5py.Group) and any(
        isinstance(group[k], h5py.Dataset) and group[k].ndim == 1 for k in group)


def _table_paths(f):
    found = []
    f.visititems(lambda name, obj: found.append(name) if _is_table(obj) else None)
    return sorted(found)


def tables(path):
    """The table groups of results file `path` ("serve/requests", "budget", ...), sorted."""
    with Results(path) as r:
        return _table_paths(r.file)


def read(path, table, names=None):
    """Table `table` of results file `path` (e.g. "serve/requests", "train/devices", "budget")
    as a pandas DataFrame in written column order, strings decoded. `df.attrs["units"]` maps
    each column to its unit as SCHEMA.md gives it ("ns", "B", "s", "1", ...); `df.attrs`
    also holds "path", "table" and "created_by". `names` picks columns. Raises OSError when
    the file is not HDF5 and ResultsError for a file that is not a vramsim results file, a
    table it lacks (naming those it has) or a column the table lacks."""
    import pandas as pd

    with Results(path) as r:
        key = str(table).strip("/")
        group = r.group(key)
        if group is None or not _is_table(group):
            raise ResultsError(f"'{r.path}' has no table '{key}'; its tables: "
                               f"{', '.join(_table_paths(r.file)) or 'none'}")
        available = columns(group)
        wanted = list(names) if names is not None else available
        for n in wanted:
            if stored_name(group, n) is None:
                raise ResultsError(f"'{r.path}': table '{key}' has no column '{n}'; its "
                                   f"columns: {', '.join(available)}")
        df = pd.DataFrame({n: column(group, n) for n in wanted}, columns=wanted)
        df.attrs["units"] = {n: text(units(group, stored_name(group, n))) for n in wanted}
        df.attrs["path"] = r.path
        df.attrs["table"] = key
        df.attrs["created_by"] = text(r.created_by)
        return df


def _plain(value):
    """An HDF5 attribute or cell as a plain Python value (str, int, float, bool or list)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _group_summary(group):
    """A group's attributes (but `columns`) and, when it is a one-row table, that row."""
    out = {k: _plain(group.attrs[k]) for k in sorted(group.attrs) if k != "columns"}
    if _is_table(group) and num_rows(group) == 1:
        for name in columns(group):
            out[name] = _plain(column(group, name)[0])
    return out


def _rows(group):
    """A table group's rows as a list of dicts of plain values."""
    cols = {n: column(group, n) for n in columns(group)}
    return [{n: _plain(v[i]) for n, v in cols.items()} for i in range(num_rows(group))]


def summary(path):
    """The headline of results file `path` as a dict: the file's `created_by`, `command`,
    `vramsim_version`, `schema_version`, `seed`, `calibration_source` and `inputs` (parsed
    JSON); then the fields of the command that wrote it at the top level (its group's
    attributes and its one-row `summary` table: serve's `ttft_p99_s`, train's `step_time_s`,
    budget's `fits`, ...), with per-device tables (`budget`, `train/devices`) as a list of row
    dicts under `devices`; other groups the file holds (a serve file's `budget`) under their
    name. Units: those of `read(path, table).attrs["units"]` (SCHEMA.md)."""
    with Results(path) as r:
        f = r.file
        out = {k: _plain(f.attrs[k]) for k in ("created_by", "command", "vramsim_version",
                                                "schema_version", "seed", "calibration_source")
               if k in f.attrs}
        out["inputs"] = r.inputs()
        words = text(r.created_by).split()
        primary = words[1] if len(words) > 1 and words[1] in f else (r.kinds[0] if r.kinds
                                                                      else None)
        for kind in r.kinds or ([primary] if primary else []):
            group = r.group(kind)
            if group is None:
                continue
            if kind == "budget":  # one row per device, however many devices
                part = {k: _plain(group.attrs[k]) for k in sorted(group.attrs) if k != "columns"}
                part["devices"] = _rows(group)
            else:
                part = _group_summary(group)
                if _is_table(group) and num_rows(group) != 1:
                    part["rows"] = _rows(group)
            for sub in ("summary",):
                if isinstance(group.get(sub), h5py.Group) and num_rows(group[sub]) == 1:
                    part.update(_group_summary(group[sub]))
            if isinstance(group.get("devices"), h5py.Group):
                part["devices"] = _rows(group["devices"])
            if kind == primary:
                for k, v in part.items():
                    out.setdefault(k, v)
            else:
                out[kind] = part
        return out
