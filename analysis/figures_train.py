"""Figures and tables of `vramsim train` files: per-device memory over the step as stacked
areas by category (like PyTorch's memory visualiser), the op timeline as a Gantt chart by
stream, the step-time split, and the /train/devices table."""

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.patches import Patch

import vramsim_results as vr
from figure_common import (CATEGORY_COLORS, Figure, Skipped, TALL, Table, WIDE, finish, fmt_number,
                           group_table, new_figure, save)

SECTION = "Training"
CATEGORIES = ("parameters", "gradients", "optimizer_state", "activations", "temporaries",
              "workspaces", "comm_buffers")
# Devices (pipeline stages) that get a memory figure each; the caption names the rest.
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
        ax.set_title(f"Device {d} (pipeline stage {d}): memory by category over two steps")
        ax.legend(fontsize=8, loc="upper left", ncol=2)
        finish(fig)
        name = save(fig, outdir, f"train_memory_device{d}.png")
        out.append(Figure(SECTION, name, f"{title}: device {d}",
                          "Bytes requested per category after each allocation or free "
                          "(/train/memory_timeline), stacked; lines: the allocator's allocated "
                          "and reserved bytes."))
    if len(devices) > MAX_MEMORY_FIGURES:
        out.append(Skipped(SECTION, f"{title}: devices {devices[MAX_MEMORY_FIGURES]}-"
                           f"{devices[-1]}", f"only the first {MAX_MEMORY_FIGURES} of "
                           f"{len(devices)} devices are drawn"))
    return out


def _op_kind(op):
    word = op.split(" ", 1)[0]
    return word if word in OP_KINDS else "other"


def op_timeline(ops, outdir):
    title = "Op timeline by device and stream"
    if not vr.has_columns(ops, "start_ns", "end_ns", "device", "stream", "op"):
        return Skipped(SECTION, title, "/train/op_timeline lacks start_ns, end_ns, device, "
                       "stream or op")
    start = vr.column(ops, "start_ns") / vr.NS_PER_S
    end = vr.column(ops, "end_ns") / vr.NS_PER_S
    device = vr.column(ops, "device")
    stream = np.asarray(vr.column(ops, "stream")).astype(str)
    kinds = np.array([_op_kind(o) for o in np.asarray(vr.column(ops, "op")).astype(str)])
    step = vr.column(ops, "step")
    lanes = sorted({(int(d), s) for d, s in zip(device, stream)},
                   key=lambda k: (k[0], {"compute": 0, "comm": 1, "p2p": 2}.get(k[1], 3), k[1]))
    lane_of = {k: i for i, k in enumerate(lanes)}
    lane = np.array([lane_of[(int(d), s)] for d, s in zip(device, stream)])
    fig, ax = new_figure(TALL if len(lanes) > 6 else WIDE)
    # One PolyCollection per op kind: tens of thousands of bars render in well under a second.
    present = []
    min_width = max(float(end.max()), 1e-9) / 1000.0
    for kind in list(OP_KINDS) + ["other"]:
        sel = kinds == kind
        if not np.any(sel):
            continue
        present.append(kind)
        # At least a pixel wide (1/1000 of the span) so instant ops stay visible.
        x0, y = start[sel], lane[sel]
        x1 = np.maximum(end[sel], x0 + min_width)
        verts = np.stack([np.stack([x0, y - 0.4], 1), np.stack([x1, y - 0.4], 1),
                          np.stack([x1, y + 0.4], 1), np.stack([x0, y + 0.4], 1)], 1)
        ax.add_collection(PolyCollection(verts, facecolors=OP_KINDS.get(kind, OTHER_COLOR),
                                         edgecolors="none", antialiased=False))
    if step is not None and np.any(step == 1):
        ax.axvline(start[step == 1].min(), color="black", ls="--", lw=1)
    ax.set_xlim(0, max(end.max(), 1e-9) * 1.01)
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([f"dev {d} {s}" for d, s in lanes], fontsize=8 if len(lanes) < 20 else 6)
    ax.set_xlabel("simulated time since the start of step 0 (s); dashed: start of step 1")
    ax.set_title(f"Ops of both steps ({len(start):,} ops)")
    ax.legend(handles=[Patch(color=OP_KINDS.get(k, OTHER_COLOR), label=k) for k in present],
              fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", alpha=0)
    finish(fig)
    name = save(fig, outdir, "train_op_timeline.png")
    return Figure(SECTION, name, title, "One bar per op of /train/op_timeline, coloured by the "
                  "first word of its name; one lane per device and stream (compute, comm for "
                  "data-parallel collectives and offload, p2p for pipeline sends).")


def step_split(devices, outdir):
    title = "Step-time split per device"
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
    ax.set_yticklabels([f"device {d}" for d in dev])
    ax.invert_yaxis()
    ax.set_xlabel("time in the timed step (s)")
    ax.set_title("Where the timed step goes, per device (pipeline stage)")
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
