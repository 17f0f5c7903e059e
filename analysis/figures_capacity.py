"""`vramsim capacity serve|train --out` files (/capacity, mode "serve" or "train").

serve: the probes' p99 TTFT, TPOT and E2E against the arrival rate, with the SLO lines, the
final bracket and the capacity found marked; goodput against max_num_seqs when that search
ran. train: the capacity per checkpointing policy as bars (largest micro-batch, longest
sequence, tokens/s) and each micro-batch probe's peak memory against the device's memory.
Tables: the answer (/capacity attributes), /capacity/policies and /capacity/probes.
"""

import numpy as np
from matplotlib.ticker import MaxNLocator, ScalarFormatter

import vramsim_results as vr
from figure_common import (Figure, Skipped, TALL, Table, WIDE, finish, group_table, new_figure,
                           save)

SECTION = "Capacity"
# (column, SLO attribute, panel title)
LATENCY_PANELS = (("ttft_p99_s", "slo_ttft_p99_s", "p99 TTFT"),
                  ("tpot_p99_s", "slo_tpot_p99_s", "p99 TPOT"),
                  ("e2e_p99_s", "slo_e2e_p99_s", "p99 E2E"))
# (column, panel title, axis label, scale from the stored unit)
TRAIN_PANELS = (("max_micro_batch", "Largest micro-batch at the plan's seq_len",
                 "micro-batch (sequences)", 1.0),
                ("max_seq_len", "Longest sequence at micro-batch 1", "sequence length (tokens)",
                 1.0),
                ("tokens_per_s", "Throughput at the largest micro-batch",
                 "throughput (tokens/s)", 1.0))


def _bar_label(value):
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def serve_latency_figure(res, outdir):
    title = "Capacity search: p99 latency against the arrival rate"
    cap = res.group("capacity")
    probes = res.group("capacity/probes")
    if not vr.has_columns(probes, "phase", "rate_per_s", "meets_slo"):
        return Skipped(SECTION, title, "/capacity/probes lacks phase, rate_per_s or meets_slo")
    phase = vr.column(probes, "phase")
    keep = np.array([p != "max_num_seqs" for p in phase], dtype=bool)
    if not np.any(keep):
        return Skipped(SECTION, title, "/capacity/probes has no bisection probe")
    rate = vr.column(probes, "rate_per_s")[keep].astype(np.float64)
    meets = vr.column(probes, "meets_slo")[keep].astype(bool)
    panels = [p for p in LATENCY_PANELS if p[0] in probes]
    fig, axes = new_figure(WIDE, 1, len(panels), squeeze=False)
    found = float(vr.attr(cap, "max_rate_per_s", 0.0))
    low = float(vr.attr(cap, "bracket_low_per_s", 0.0))
    high = float(vr.attr(cap, "bracket_high_per_s", 0.0))
    for ax, (col, slo_name, ptitle) in zip(axes.flat, panels):
        y = vr.column(probes, col)[keep].astype(np.float64) * 1e3
        order = np.argsort(rate, kind="stable")
        ax.plot(rate[order], y[order], color="grey", lw=0.8, zorder=1)
        ax.scatter(rate[meets], y[meets], color="C2", marker="o", label="meets the SLOs",
                   zorder=3)
        ax.scatter(rate[~meets], y[~meets], color="C3", marker="x", label="misses the SLOs",
                   zorder=3)
        slo = vr.attr(cap, slo_name)
        if slo is not None:
            ax.axhline(float(slo) * 1e3, color="C3", ls="--", lw=1,
                       label=f"SLO {float(slo) * 1e3:.4g} ms")
        if low > 0 and high > 0:
            ax.axvspan(low, high, color="C0", alpha=0.15, label="final bracket")
        if found > 0:
            ax.axvline(found, color="C0", lw=1.5, label=f"capacity {found:.4g} req/s")
        if np.all(rate > 0):
            ax.set_xscale("log")
        if np.all(y > 0):
            ax.set_yscale("log")
        ax.set_title(ptitle, fontsize=10)
        ax.set_xlabel("arrival rate (requests/s)")
        ax.set_ylabel(f"{ptitle} (ms)")
    axes.flat[0].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"{vr.attr(cap, 'model', '')} on {vr.attr(cap, 'gpu', '')}: "
                 f"{int(np.count_nonzero(keep))} probes", fontsize=10)
    finish(fig)
    name = save(fig, outdir, "capacity_serve_latency.png")
    caption = ("Each point is one simulation of /capacity/probes (the bisection over the rate, "
               "and for a trace the run that measured its own rate); green met every SLO, red "
               "missed one. Dashed: the SLO; blue line: the largest rate found to meet them; "
               "shaded: the final bracket.")
    note = vr.attr(cap, "note", "")
    if note:
        caption += f" Note: {note}."
    return Figure(SECTION, name, title, caption)


def serve_max_num_seqs_figure(res, outdir):
    title = "max_num_seqs search: goodput at the capacity found"
    probes = res.group("capacity/probes")
    if not vr.has_columns(probes, "phase", "max_num_seqs", "goodput_per_s"):
        return None
    phase = vr.column(probes, "phase")
    keep = np.array([p == "max_num_seqs" for p in phase], dtype=bool)
    if not np.any(keep):
        return None  # the search was not asked for
    seqs = vr.column(probes, "max_num_seqs")[keep]
    goodput = vr.column(probes, "goodput_per_s")[keep].astype(np.float64)
    best = int(vr.attr(res.group("capacity"), "best_max_num_seqs", 0))
    fig, ax = new_figure(WIDE)
    ax.plot(seqs, goodput, marker="o", color="C0")
    if best > 0:
        ax.axvline(best, color="C2", ls="--", label=f"best: {best}")
        ax.legend(fontsize=8)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set_xlabel("max_num_seqs (sequences per step)")
    ax.set_ylabel("goodput (requests/s)")
    finish(fig)
    name = save(fig, outdir, "capacity_serve_max_num_seqs.png")
    return Figure(SECTION, name, title, "One point per max_num_seqs probe (phase "
                  "\"max_num_seqs\"), all at the capacity found; dashed: the best goodput.")


def policy_bars_figure(policies, outdir, name, panels, title, section):
    """One horizontal bar per checkpointing policy for each of `panels` present."""
    panels = [p for p in panels if p[0] in policies]
    if not panels:
        return Skipped(section, title, "the policies table has none of "
                       + ", ".join(p[0] for p in panels))
    names = [str(s) for s in vr.column(policies, "checkpointing")]
    fig, axes = new_figure(WIDE, 1, len(panels), squeeze=False)
    y = np.arange(len(names))
    for ax, (col, ptitle, unit, scale) in zip(axes.flat, panels):
        v = vr.column(policies, col).astype(np.float64) * scale
        ax.barh(y, v, color=[f"C{i}" for i in range(len(names))])
        for yi, value in zip(y, v):
            ax.text(value, yi, f" {_bar_label(value)}", va="center", fontsize=8)
        ax.set_yticks(y)
        ax.set_yticklabels(names, fontsize=8)
        ax.invert_yaxis()
        ax.set_title(ptitle, fontsize=9)
        ax.set_xlabel(unit)
        ax.xaxis.set_major_locator(MaxNLocator(4))  # five-digit ticks stay apart
        ax.margins(x=0.25)
    finish(fig)
    return Figure(section, save(fig, outdir, name), title,
                  "One bar per checkpointing policy; 0 means not even the smallest fits.")


def probe_memory_figure(probes, group, outdir, name, title, section):
    """Peak memory (reserved + CUDA context and NCCL) of each micro-batch probe against the
    micro-batch, one line per policy, with the device's memory."""
    needed = ("checkpointing", "search", "micro_batch", "fits", "peak_reserved_bytes",
              "non_allocator_bytes")
    if not vr.has_columns(probes, *needed):
        return Skipped(section, title, "the probes table lacks one of " + ", ".join(needed))
    search = vr.column(probes, "search")
    keep = np.array([s == "micro_batch" for s in search], dtype=bool)
    if not np.any(keep):
        return Skipped(section, title, "no micro-batch probe in the file")
    ckpt = np.array([str(c) for c in vr.column(probes, "checkpointing")])[keep]
    mb = vr.column(probes, "micro_batch")[keep]
    fits = vr.column(probes, "fits")[keep].astype(bool)
    need = vr.gib(vr.column(probes, "peak_reserved_bytes")[keep]
                  + vr.column(probes, "non_allocator_bytes")[keep])
    fig, ax = new_figure(WIDE)
    for i, policy in enumerate(dict.fromkeys(ckpt)):
        sel = ckpt == policy
        order = np.argsort(mb[sel], kind="stable")
        x, y, ok = mb[sel][order], need[sel][order], fits[sel][order]
        ax.plot(x, y, color=f"C{i}", lw=1, label=policy)
        ax.scatter(x[ok], y[ok], color=f"C{i}", marker="o", zorder=3)
        ax.scatter(x[~ok], y[~ok], color=f"C{i}", marker="x", zorder=3)
        if np.any(ok):
            best = int(np.max(x[ok]))
            ax.scatter([best], [np.max(y[ok & (x == best)])], s=120, facecolors="none",
                       edgecolors="black", zorder=4)
    memory = vr.attr(group, "device_memory_bytes")
    if memory:
        ax.axhline(float(memory) / vr.BYTES_PER_GIB, color="black", ls="--", lw=1,
                   label=f"device memory {float(memory) / vr.BYTES_PER_GIB:.1f} GiB")
    if np.all(mb > 0):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set_xlabel("micro-batch (sequences)")
    ax.set_ylabel("peak reserved + context/NCCL (GiB)")
    ax.legend(fontsize=8, title="checkpointing", title_fontsize=8)
    finish(fig)
    caption = ("Each point is one simulated step of the micro-batch search (doubling, then "
               "bisection) on the binding device: o fits, x does not; the circled point is "
               "each policy's answer.")
    return Figure(section, save(fig, outdir, name), title, caption)


def render(res, outdir, max_points):
    del max_points  # tens of probes at most
    cap = res.group("capacity")
    mode = vr.attr(cap, "mode", "")
    if mode == "serve":
        items = [serve_latency_figure(res, outdir)]
        seqs = serve_max_num_seqs_figure(res, outdir)
        if seqs is not None:
            items.append(seqs)
        return items
    if mode == "train":
        policies = res.group("capacity/policies")
        if policies is None or vr.num_rows(policies) == 0:
            return [Skipped(SECTION, "Capacity per checkpointing policy",
                            "the file has no /capacity/policies table or it is empty")]
        items = [policy_bars_figure(policies, outdir, "capacity_train_policies.png",
                                    TRAIN_PANELS, "Capacity per checkpointing policy", SECTION)]
        probes = res.group("capacity/probes")
        if probes is not None:
            items.append(probe_memory_figure(probes, cap, outdir, "capacity_train_memory.png",
                                             "Micro-batch search: peak memory per probe",
                                             SECTION))
        return items
    return [Skipped(SECTION, "Capacity figures", f"/capacity has mode '{mode}', expected "
                    "'serve' or 'train'")]


def attribute_table(group, section, title):
    rows = [[k, vr.text(group.attrs[k])] for k in sorted(group.attrs) if k != "columns"]
    return Table(section, title, ["attribute", "value"], rows)


def tables(res):
    out = []
    cap = res.group("capacity")
    if cap is not None:
        out.append(attribute_table(cap, SECTION, "Answer (/capacity)"))
    policies = res.group("capacity/policies")
    if policies is not None:
        out.append(group_table(policies, SECTION, "Policies (/capacity/policies)",
                               transpose_upto=0))
    probes = res.group("capacity/probes")
    if probes is not None:
        out.append(group_table(probes, SECTION, "Every simulation (/capacity/probes)",
                               transpose_upto=0))
    return out
