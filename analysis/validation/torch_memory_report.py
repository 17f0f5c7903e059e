"""The measured-vs-simulated comparison of torch_memory_check.py and its JSON and markdown
report. No torch here: the tests run it on fake measurements.

Relative error = (simulated - measured) / measured: positive when vramsim overestimates.
"""

from __future__ import annotations

import json
import os

GIB = 1024 ** 3


def rel_error(measured, simulated):
    if measured is None or simulated is None or measured == 0:
        return None
    return (simulated - measured) / measured


def row(quantity: str, measured, simulated, unit: str = "bytes", note: str = "") -> dict:
    return {"quantity": quantity, "unit": unit, "measured": measured, "simulated": simulated,
            "rel_error": rel_error(measured, simulated), "note": note}


def compare_train(measured: dict, sim: dict) -> list[dict]:
    """One training case: PyTorch's allocator statistics against `vramsim train --format json`."""
    m = measured
    rows = [
        row("peak allocated", m.get("peak_allocated_bytes"), sim.get("peak_allocated_bytes"),
            note="torch.cuda.max_memory_allocated over one step vs peak_allocated_bytes"),
        row("peak reserved", m.get("peak_reserved_bytes"), sim.get("peak_reserved_bytes"),
            note="torch.cuda.max_memory_reserved vs peak_reserved_bytes"),
        row("device used", m.get("device_used_bytes"),
            _sum(sim.get("peak_reserved_bytes"), sim.get("non_allocator_bytes")),
            note="mem_get_info total - free after the step vs peak_reserved + non_allocator"),
        row("outside the allocator", m.get("non_allocator_bytes"),
            sim.get("non_allocator_bytes"),
            note="device used - memory_reserved (CUDA context, libraries) vs non_allocator_bytes"),
        row("model state", m.get("model_state_bytes"), sim.get("model_state_bytes"),
            note="fp32 params + fp32 grads + AdamW exp_avg/exp_avg_sq (16 B/param) vs "
                 "bf16 params + bf16 grads + fp32 master + Adam (16 B/param)"),
        row("activations", m.get("activation_bytes"), sim.get("activation_bytes"),
            note="allocated after forward+loss minus before, less the bf16 weight copies "
                 "autograd keeps (AMP), vs activation_bytes (stored activations + logits)"),
        row("activations incl. AMP weight copies", m.get("forward_retained_bytes"),
            sim.get("activation_bytes"),
            note="the same delta with the bf16 weight copies; vramsim counts bf16 weights "
                 "as model state instead"),
        row("step time", m.get("step_time_s"), sim.get("step_time_s"), unit="s",
            note="median of CUDA-event-timed steps vs step_time_s (roofline)"),
    ]
    return rows


def simulated_decode(budget: dict, batch: int, max_len: int) -> dict:
    """The decode run's analogue in `vramsim budget`: weights + the profile run's activation peak
    (batch x prompt tokens, like the prefill) + a cache of batch x max_len tokens."""
    kv = _mul(budget.get("kv_bytes_per_token"), batch * max_len)
    peak = _sum(budget.get("weights_bytes"), budget.get("activation_peak_bytes"), kv)
    outside = _sum(budget.get("non_torch_bytes"), budget.get("cuda_context_bytes"))
    return {"kv_cache_bytes": kv, "peak_allocated_bytes": peak,
            "outside_allocator_bytes": outside, "device_used_bytes": _sum(peak, outside)}


def compare_decode(measured: dict, budget: dict, batch: int, max_len: int) -> list[dict]:
    m, s = measured, simulated_decode(budget, batch, max_len)
    return [
        row("weights", m.get("weights_bytes"), budget.get("weights_bytes"),
            note="bf16 parameters as built vs weights_bytes (vLLM's layout)"),
        row("KV cache", m.get("kv_cache_bytes"), s["kv_cache_bytes"],
            note="the preallocated cache tensor vs kv_bytes_per_token x batch x max_len"),
        row("activation peak", m.get("activation_peak_bytes"),
            budget.get("activation_peak_bytes"),
            note="peak allocated - allocated before the run (weights, KV cache, rope tables, "
                 "prompts) vs activation_peak_bytes (profile run of batch x prompt tokens)"),
        row("peak allocated", m.get("peak_allocated_bytes"), s["peak_allocated_bytes"],
            note="max_memory_allocated vs weights + activation peak + KV cache"),
        row("peak reserved", m.get("peak_reserved_bytes"), s["peak_allocated_bytes"],
            note="max_memory_reserved vs the same sum (budget models no allocator cache)"),
        row("outside the allocator", m.get("non_allocator_bytes"),
            s["outside_allocator_bytes"],
            note="device used - memory_reserved vs non_torch + cuda_context"),
        row("device used", m.get("device_used_bytes"), s["device_used_bytes"],
            note="mem_get_info total - free vs the sum above + non_torch + cuda_context"),
    ]


def _sum(*values):
    return None if any(v is None for v in values) else sum(values)


def _mul(a, b):
    return None if a is None else a * b


# --- report ---------------------------------------------------------------------------------

def fmt_value(value, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "bytes":
        if abs(value) < GIB:
            return f"{value / 1024 ** 2:.1f} MiB"
        return f"{value / GIB:.3f} GiB"
    if unit == "s":
        return f"{value * 1e3:.2f} ms"
    return f"{value}"


def fmt_error(err) -> str:
    return "-" if err is None else f"{err * 100:+.1f} %"


def markdown_table(rows: list[dict]) -> list[str]:
    out = ["| quantity | measured | vramsim | error | how |", "|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['quantity']} | {fmt_value(r['measured'], r['unit'])} | "
                   f"{fmt_value(r['simulated'], r['unit'])} | {fmt_error(r['rel_error'])} | "
                   f"{r['note']} |")
    return out


def render_markdown(report: dict) -> str:
    """The report as markdown: environment, model, then one table per case."""
    env, model = report.get("environment") or {}, report.get("model") or {}
    lines = [f"# PyTorch memory vs vramsim: {model.get('model', '?')}", ""]
    if report.get("status") != "measured":
        lines += [f"**Status: {report.get('status')}.** Nothing below is a measurement unless "
                  "the measured column has a value.", ""]
    lines += [f"- command: `{report.get('command', '')}`",
              f"- created: {report.get('created_utc', '')}, git {report.get('git_commit', '?')}"]
    for key in ("device_name", "torch_version", "cuda_version", "cudnn_version", "driver_version",
                "device_total_bytes", "alloc_conf"):
        if env.get(key) is not None:
            value = env[key]
            if key == "device_total_bytes":
                value = f"{value / GIB:.2f} GiB"
            lines.append(f"- {key}: {value}")
    lines.append(f"- model: {model.get('model')} from `{model.get('config_source')}`, "
                 f"{model.get('num_layers')} of {model.get('original_num_layers')} layers, "
                 f"{(model.get('params') or {}).get('total', 0):,} parameters")
    if model.get("scaling_note"):
        lines.append(f"- scaling: {model['scaling_note']}")
    lines.append(f"- vramsim config: `{model.get('scaled_config_path')}`")
    for note in report.get("notes", []):
        lines.append(f"- note: {note}")
    for case in report.get("cases", []):
        lines += ["", f"## {case['name']}", ""]
        shape = {k: case[k] for k in ("micro_batch", "seq_len", "checkpointing", "batch",
                                      "prompt_len", "gen_len", "max_len") if k in case}
        lines.append("shape: " + ", ".join(f"{k} {v}" for k, v in shape.items()))
        lines += ["", "```", case.get("vramsim_line", ""), "```", ""]
        if case.get("error"):
            lines += [f"**error:** {case['error']}", ""]
        lines += markdown_table(case.get("comparison", []))
        extra = (case.get("measured") or {}).get("phase_peak_allocated_bytes")
        if extra:
            lines += ["", "measured peak allocated by phase: " + ", ".join(
                f"{k} {fmt_value(v, 'bytes')}" for k, v in extra.items())]
    return "\n".join(lines) + "\n"


def write_report(report: dict, out_dir: str) -> tuple[str, str]:
    """Writes torch_memory_check.json and .md into `out_dir` (atomically: temp file, rename)."""
    os.makedirs(out_dir, exist_ok=True)
    paths = (os.path.join(out_dir, "torch_memory_check.json"),
             os.path.join(out_dir, "torch_memory_check.md"))
    texts = (json.dumps(report, indent=2, default=str) + "\n", render_markdown(report))
    for path, text in zip(paths, texts):
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
    return paths
