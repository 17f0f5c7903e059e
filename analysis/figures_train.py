"""Figures and tables of `vramsim train` files: per-device memory over the step as stacked
areas by category (like PyTorch's memory visualiser), the op timeline as a Gantt chart by
stream, the step-time split, and the /train/devices table."""

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

import vramsim_results as vr
from figure_common import (CATEGORY_COLORS, Figure, Skipped, TALL, Table, WIDE, finish, fmt_number,
                           group_table, new_figure, save)

SECTION = "Training"
CATEGORIES = ("parameters", "gradients", "optimizer_state", "activations", "temporaries",
              "workspaces", "comm_buffers")
# Pipeline stages that get a memory figure each (one device per stage is simulated, so a
# file's `device` is the stage: SCHEMA.md); the page names the rest.
MAX_MEMORY_FIGURES = 8
# Op kinds by the first word of `op`, with their colours in the Gantt chart.
OP_KINDS = {
    "fwd": "#1f77b4", "bwd": "#ff7f0e", "recompute": "#9467bd", "allgather": "#2ca02c",
    "reducescatter": "#17becf", "allreduce": "#bcbd22", "tp-comm": "#8c564b", "send": "#e377c2",
    "optimizer": "#d62728", "grad-norm": "#7f7f7f",
}
OTHER_COLOR = "#c7c7c7"


def render(res, outdir, max_points):
    out = []
    timeline = res.group("train/memory_timeline")
    if timeline is None:
        out.append(Skipped(SECTION, "Memory over the step",
                           "the file has no /train/memory_timeline table"))
    else:
        out.extend(memory_figures(res, timeline, outdir, max_points))
    ops = res.group("train/op_timeline")
    if ops is None:
        out.append(Skipped(SECTION, "Op timeline", "the file has no /train/op_timeline table"))
    else:
        out.append(op_timeline(ops, outdir))
    devices = res.group("train/devices")
    if devices is None:
        out.append(Skipped(SECTION, "Step-time split", "the file has no /train/devices table"))
    else:
        out.append(step_split(devices, outdir))
    return out


def _memory_limit_gib(res):
    total = res.inputs().get("total_memory_bytes")
    return total / vr.BYTES_PER_GIB if isinstance(total, (int, float)) and total > 0 else None


def memory_figures(res, timeline, outdir, max_points):
    title = "Memory over the step by category"
    cats = [c for c in CATEGORIES if f"{c}_bytes" in timeline]
    if not vr.has_columns(timeline, "time_ns", "device") or not cats:
        return [Skipped(SECTION, title, "/train/memory_timeline lacks time_ns, device or the "
                        "category columns")]
    device = vr.column(timeline, "device")
    time_ns = vr.column(timeline, "time_ns")
    stacks = {c: vr.column(timeline, f"{c}_bytes") for c in cats}
    allocated = vr.column(timeline, "allocated_bytes")
    reserved = vr.column(timeline, "reserved_bytes")
    limit = _memory_limit_gib(res)
    devices = np.unique(device)
    out = []
    for d in devices[:MAX_MEMORY_FIGURES]:
        mask = device == d
        total = sum(stacks[c][mask] for c in cats)
        keep = vr.envelope_indices(total, max_points)
        t = time_ns[mask][keep] / vr.NS_PER_S
        fig, ax = new_figure(WIDE)
        layers = [vr.gib(stacks[c][mask][keep]) for c in cats]
        bottom = np.zeros(len(t))
        for c, layer in zip(cats, layers):
            label = c.replace("_", " ") if np.any(layer > 0) else None  # legend: used ones
            ax.fill_between(t, bottom, bottom + layer, step="post", lw=0,
                            color=CATEGORY_COLORS[c], label=label)
            bottom = bottom + layer
        if reserved is not None:
            ax.plot(t, vr.gib(reserved[mask][keep]), drawstyle="steps-post", color="black",
                    ls="--", lw=1, label="reserved (allocator segments)")
        if allocated is not None:
            ax.plot(t, vr.gib(allocated[mask][keep]), drawstyle="steps-post", color="black",
                    lw=0.8, label="allocated (rounded)")
        if limit:
            ax.axhline(limit, color="red", lw=1, label=f"device memory {limit:.1f} GiB")
        ax.set_xlabel("simulated time since the start of step 0 (s)")
        ax.set_ylabel("memory (GiB)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"Pipeline stage {d}: memory by category over two steps")
        ax.legend(fontsize=8, loc="upper left", ncol=2)
        finish(fig)
        name = save(fig, outdir, f"train_memory_device{d}.png")
        out.append(Figure(SECTION, name, f"{title}: pipeline stage {d}",
                          "Bytes requested per category after each allocation or free "
                          "(/train/memory_timeline), stacked; lines: the allocator's allocated "
                          "and reserved bytes."))
    if len(devices) > MAX_MEMORY_FIGURES:
        out.append(Skipped(SECTION, f"{title}: pipeline stages {devices[MAX_MEMORY_FIGURES]}-"
                           f"{devices[-1]}", f"only the first {MAX_MEMORY_FIGURES} of "
                           f"{len(devices)} pipeline stages are drawn"))
    return out


def _op_kind(op):
    word = op.split(" ", 1)[0]
    return word if word in OP_KINDS else "other"


# Lanes of a pipeline stage, top to bottom: the compute stream, the tensor-parallel
# collectives (they run on the compute stream between a layer's kernels: drawn in a lane of
# their own so that the micro-batch blocks of the schedule stay visible), data-parallel
# communication and offload, pipeline sends.
LANE_ORDER = ("compute", "tp-comm", "comm", "p2p")
LANE_NAMES = {"compute": "compute", "tp-comm": "TP comm", "comm": "DP comm", "p2p": "p2p sends"}
# Phases whose consecutive ops of one micro-batch form one block of the schedule.
BLOCK_PHASES = ("fwd", "bwd", "recompute")
# Blocks numbered with their micro-batch when there are at most this many.
MAX_BLOCK_LABELS = 400


def _phase(kind, op):
    """The schedule phase an op belongs to: fwd, bwd, recompute (a TP collective takes the
    phase written in its name, `tp-comm L3 fwd mb0`), else other."""
    if kind == "tp-comm":
        words = op.split()
        return words[2] if len(words) > 2 and words[2] in ("fwd", "bwd") else "other"
    return kind if kind in BLOCK_PHASES else "other"


def _blocks(start, end, keys, sel):
    """(first op, block start, block end) of each run of consecutive ops among `sel` (in time
    order per device) that share every array of `keys` (device first)."""
    idx = np.flatnonzero(sel)
    idx = idx[np.lexsort((start[idx], keys[0][idx]))]
    if len(idx) == 0:
        return idx, start[idx], end[idx]
    new = np.zeros(len(idx), bool)
    new[0] = True
    for k in keys:
        v = k[idx]
        new[1:] |= v[1:] != v[:-1]
    heads = np.flatnonzero(new)
    return idx[heads], np.minimum.reduceat(start[idx], heads), np.maximum.reduceat(end[idx], heads)


def _bars(ax, x0, x1, y, half, color, min_width, edge="none"):
    """One PolyCollection of bars [x0, x1] x [y - half, y + half] (tens of thousands of bars
    render in well under a second), each at least `min_width` wide so instant ops show."""
    x1 = np.maximum(x1, x0 + min_width)
    verts = np.stack([np.stack([x0, y - half], 1), np.stack([x1, y - half], 1),
                      np.stack([x1, y + half], 1), np.stack([x0, y + half], 1)], 1)
    ax.add_collection(PolyCollection(verts, facecolors=color, edgecolors=edge,
                                     linewidths=0.6 if edge != "none" else 0,
                                     antialiased=False))


def op_timeline(ops, outdir):
    title = "Op timeline by pipeline stage and stream"
    if not vr.has_columns(ops, "start_ns", "end_ns", "device", "stream", "op"):
        return Skipped(SECTION, title, "/train/op_timeline lacks start_ns, end_ns, device, "
                       "stream or op")
    start = vr.column(ops, "start_ns") / vr.NS_PER_S
    end = vr.column(ops, "end_ns") / vr.NS_PER_S
    device = vr.column(ops, "device").astype(np.int64)
    stream = np.asarray(vr.column(ops, "stream")).astype(str)
    names = np.asarray(vr.column(ops, "op")).astype(str)
    kinds = np.array([_op_kind(o) for o in names])
    phases = np.array([_phase(k, o) for k, o in zip(kinds, names)])
    step = vr.column(ops, "step")
    micro_batch = vr.column(ops, "micro_batch")
    n = len(start)
    micro_batch = micro_batch if micro_batch is not None else np.full(n, -1, np.int64)
    route = np.where(kinds == "tp-comm", "tp-comm", np.where(kinds == "send", "p2p", stream))
    lanes = sorted({(int(d), r) for d, r in zip(device, route)},
                   key=lambda k: (k[0], LANE_ORDER.index(k[1]) if k[1] in LANE_ORDER else 9,
                                  k[1]))
    lane_of = {k: i for i, k in enumerate(lanes)}
    lane = np.array([lane_of[(int(d), r)] for d, r in zip(device, route)], dtype=np.float64)
    fig, ax = new_figure(TALL if len(lanes) > 6 else WIDE)
    span = max(float(end.max()), 1e-9) if n else 1e-9
    min_width = span / 1000.0  # a pixel
    present = []
    # The compute lane: each micro-batch's forward (backward, recompute) pass as one block,
    # its TP collectives included, edged in white so that neighbouring blocks stay apart.
    in_block = (route == "compute") | (route == "tp-comm")
    in_block &= np.isin(phases, BLOCK_PHASES)
    lane_compute = np.array([lane_of.get((int(d), "compute"), -1) for d in device], np.float64)
    step_key = step if step is not None else np.zeros(n, np.int64)
    first, b0, b1 = _blocks(start, end, (device, step_key, micro_batch, phases), in_block)
    labels = len(first) <= MAX_BLOCK_LABELS
    for phase in BLOCK_PHASES:
        sel = phases[first] == phase
        if not np.any(sel):
            continue
        present.append((phase, f"{phase} (one block per micro-batch)"))
        _bars(ax, b0[sel], b1[sel], lane_compute[first][sel], 0.4, OP_KINDS[phase], min_width,
              edge="white")
    if labels:
        for i, x0, x1 in zip(first, b0, b1):
            if micro_batch[i] >= 0 and x1 - x0 > span / 70:
                ax.text((x0 + x1) / 2, lane_compute[i], str(int(micro_batch[i])), ha="center",
                        va="center", fontsize=6, color="white", clip_on=True)
    # Every other op as its own bar: TP collectives thinner, in their lane.
    rest = ~((route == "compute") & np.isin(phases, BLOCK_PHASES))
    for kind in list(OP_KINDS) + ["other"]:
        sel = rest & (kinds == kind)
        if not np.any(sel):
            continue
        if kind not in dict(present):
            present.append((kind, "TP collective" if kind == "tp-comm" else kind))
        half = 0.25 if kind == "tp-comm" else 0.4
        _bars(ax, start[sel], end[sel], lane[sel], half, OP_KINDS.get(kind, OTHER_COLOR),
              min_width)
    if step is not None and np.any(step == 1):
        ax.axvline(start[step == 1].min(), color="black", ls="--", lw=1,
                   label="start of step 1")
    ax.set_xlim(0, span * 1.01)
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([f"stage {d} {LANE_NAMES.get(r, r)}" for d, r in lanes],
                       fontsize=8 if len(lanes) < 20 else 6)
    ax.set_xlabel("simulated time since the start of step 0 (s)")
    numbered = "; blocks numbered by micro-batch" if labels else ""
    ax.set_title(f"Ops of both steps by pipeline stage ({n:,} ops{numbered})")
    handles = [Patch(color=OP_KINDS.get(k, OTHER_COLOR), label=label) for k, label in present]
    if step is not None and np.any(step == 1):
        handles.append(Line2D([], [], color="black", ls="--", lw=1, label="start of step 1"))
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", alpha=0)
    finish(fig)
    name = save(fig, outdir, "train_op_timeline.png")
    return Figure(SECTION, name, title, "From /train/op_timeline (`device` is the pipeline "
                  "stage): on the compute lane each micro-batch's forward, backward or "
                  "recompute pass is one block numbered with its micro-batch, so the pipeline "
                  "schedule (e.g. 1F1B) reads directly; the tensor-parallel collectives inside "
                  "those passes are drawn on their own lane below; other ops (optimizer, "
                  "grad-norm, data-parallel collectives, pipeline sends) one bar each, "
                  "coloured by the first word of their name.")


def step_split(devices, outdir):
    title = "Step-time split per pipeline stage"
    parts = [c for c in ("compute_s", "tp_comm_s", "exposed_comm_s", "bubble_s") if c in devices]
    if "device" not in devices or not parts:
        return Skipped(SECTION, title, "/train/devices lacks the step-split columns")
    dev = vr.column(devices, "device")
    fig, ax = new_figure(WIDE)
    left = np.zeros(len(dev))
    colors = {"compute_s": "#1f77b4", "tp_comm_s": "#8c564b", "exposed_comm_s": "#2ca02c",
              "bubble_s": "#c7c7c7"}
    labels = {"compute_s": "compute", "tp_comm_s": "TP collectives",
              "exposed_comm_s": "exposed DP communication", "bubble_s": "pipeline bubble"}
    for c in parts:
        v = vr.column(devices, c).astype(np.float64)
        ax.barh(dev, v, left=left, color=colors[c], label=labels[c])
        left += v
    ax.set_yticks(dev)
    ax.set_yticklabels([f"stage {d}" for d in dev])
    ax.invert_yaxis()
    ax.set_xlabel("time in the timed step (s)")
    ax.set_title("Where the timed step goes, per pipeline stage")
    ax.legend(fontsize=8, loc="lower right")
    finish(fig)
    name = save(fig, outdir, "train_step_split.png")
    return Figure(SECTION, name, title, "compute_s + tp_comm_s + exposed_comm_s + bubble_s = "
                  "step_time_s, from /train/devices.")


def tables(res):
    out = []
    train = res.group("train")
    if train is not None and train.attrs:
        rows = [[k, fmt_number(vr.attr(train, k))] for k in sorted(train.attrs)]
        out.append(Table(SECTION, "Run", ["attribute", "value"], rows))
    devices = res.group("train/devices")
    if devices is not None:
        out.append(group_table(devices, SECTION, "Devices (/train/devices)"))
    return out
