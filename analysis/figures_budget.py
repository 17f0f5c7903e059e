"""The memory budget (/budget, written by `vramsim budget` and `vramsim serve`): one stacked
bar per device with the KV tokens and concurrency it buys, and the table."""

import numpy as np

import vramsim_results as vr
from figure_common import (CATEGORY_COLORS, Figure, Skipped, WIDE, finish, group_table, new_figure,
                           save)

SECTION = "Memory budget"
PARTS = ("weights", "activation_peak", "non_torch", "cuda_graph", "kv_cache")
LABELS = {"weights": "weights", "activation_peak": "activation peak (profiling pass)",
          "non_torch": "non-torch (CUDA context, NCCL)", "cuda_graph": "CUDA graphs",
          "kv_cache": "KV cache"}


def render(res, outdir, max_points):
    del max_points  # one row per device
    budget = res.group("budget")
    title = "Memory budget per device"
    parts = [p for p in PARTS if f"{p}_bytes" in budget]
    if not parts or vr.num_rows(budget) == 0:
        return [Skipped(SECTION, title, "/budget has no *_bytes columns or no rows")]
    n = vr.num_rows(budget)
    index = vr.column(budget, "device_index")
    index = index if index is not None else np.arange(n)
    x = np.arange(n)
    fig, ax = new_figure(WIDE)
    bottom = np.zeros(n)
    top = np.zeros(n)
    for col in ("total_memory_bytes", "usable_memory_bytes"):
        v = vr.column(budget, col)
        if v is not None:
            top = np.maximum(top, vr.gib(v))
    tokens = vr.column(budget, "kv_cache_tokens", 0)
    for p in parts:
        v = vr.gib(vr.column(budget, f"{p}_bytes"))
        ax.bar(x, v, bottom=bottom, width=0.6, color=CATEGORY_COLORS[p], label=LABELS[p])
        if n <= 4:  # values in the segments large enough to hold them
            for xi, b, h, t in zip(x, bottom, v, np.maximum(top, bottom + v)):
                if h > 0.04 * t:
                    extra = f"\n{int(tokens):,} tokens" if p == "kv_cache" and tokens else ""
                    ax.text(xi, b + h / 2, f"{h:.1f} GiB{extra}", ha="center", va="center",
                            fontsize=8, color="white")
        bottom += v
    for col, style, label in (("usable_memory_bytes", "--", "usable (x gpu_memory_utilization)"),
                              ("total_memory_bytes", "-", "device memory")):
        v = vr.column(budget, col)
        if v is not None:
            ax.hlines(vr.gib(v), x - 0.4, x + 0.4, colors="red", linestyles=style, lw=1.5,
                      label=label if n else None)
    ax.set_xticks(x)
    labels = [f"device {i}" for i in index]
    for extra in ("pp_stage", "tp_rank"):
        v = vr.column(budget, extra)
        if v is not None and n > 1:
            labels = [f"{lab}\n{extra.split('_')[0]} {int(e)}" for lab, e in zip(labels, v)]
    ax.set_xticklabels(labels, fontsize=8 if n <= 16 else 6)
    ax.set_xlim(-1.5 if n <= 2 else -0.7, n + 0.5 if n <= 2 else n - 0.3)
    ax.set_ylabel("memory (GiB)")
    fits = vr.attr(budget, "fits", 1)
    verdict = "fits" if fits else "does not fit"
    kv = kv_text(res, budget)
    ax.set_title(f"{vr.attr(budget, 'model', '')} on {vr.attr(budget, 'gpu', '')}: {verdict}"
                 + (f"; {kv[0]}" if kv else ""))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    if kv:  # the numbers the KV segments buy, under the legend
        ax.text(1.02, 0.0, kv[1], transform=ax.transAxes, fontsize=8, va="bottom", ha="left",
                bbox={"boxstyle": "round", "facecolor": "#eef8fa", "edgecolor": "#17becf"})
    finish(fig)
    name = save(fig, outdir, "budget.png")
    caption = ("Per device: the vLLM start-up accounting of /budget, in GiB (2^30 B); the box "
               "gives the tokens the KV cache holds and the requests of max_model_len tokens "
               "that fit at once (kv_cache_tokens, num_gpu_blocks, max_concurrency).")
    reason = vr.attr(budget, "reason", "")
    if reason:
        caption += " Does not fit: " + reason
    return [Figure(SECTION, name, title, caption)]


def kv_text(res, budget):
    """(short, long) texts of what the KV cache holds: tokens, blocks and the concurrency of
    requests of max_model_len tokens (engine-wide, the same on every row); None without
    them."""
    tokens = vr.column(budget, "kv_cache_tokens", 0)
    concurrency = vr.column(budget, "max_concurrency", 0)
    if tokens is None or concurrency is None:
        return None
    inputs = res.inputs()
    short = f"KV cache {int(tokens):,} tokens, max concurrency {float(concurrency):.3g}"
    lines = [f"KV cache: {int(tokens):,} tokens"]
    blocks = vr.column(budget, "num_gpu_blocks", 0)
    if blocks is not None:
        size = inputs.get("block_size")
        lines.append(f"= {int(blocks):,} blocks" + (f" x {size} tokens" if size else ""))
    per_token = vr.column(budget, "kv_bytes_per_token", 0)
    if per_token is not None:
        lines.append(f"{int(per_token):,} B per token per device")
    max_len = inputs.get("max_model_len")
    lines.append(f"max concurrency: {float(concurrency):.3g} requests"
                 + (f"\nof {int(max_len):,} tokens (max_model_len)" if max_len else ""))
    return short, "\n".join(lines)


def tables(res):
    budget = res.group("budget")
    return [group_table(budget, SECTION, "Budget (/budget)", vr.attr(budget, "reason", ""))]
