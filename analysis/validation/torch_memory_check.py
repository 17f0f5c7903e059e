#!/usr/bin/env python3
"""Ground truth for vramsim's memory model: real PyTorch training steps and a real batched decode
on the GPU at hand, compared with `vramsim train` and `vramsim budget` for the same shapes.

    python3 analysis/validation/torch_memory_check.py --model meta-llama/Llama-3.2-1B --out DIR
    ... --quick            tiny sizes, a smoke test (about a minute)
    ... --dry-run          print the plan and the vramsim commands; needs neither torch nor a GPU
    ... --simulate-only    run only the vramsim side and write the report with no measurements

This file holds everything that needs no torch (planning, layer scaling, the vramsim commands,
the comparison, the JSON and markdown report); torch_memory_gpu.py holds the model and the
measurements and is imported only when a measurement runs. See README.md in this folder for
what is measured and how each number maps onto vramsim's JSON fields.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ZOO_DIR = os.path.join(ROOT, "scenarios", "models")
GIB = 1024 ** 3
# topologies/devices/h200.toml as `vramsim train --gpu h200` reports it (total_memory_bytes);
# used only to plan a --dry-run or --simulate-only run, where no device is queried.
H200_TOTAL_BYTES = 150109880320
SCHEMA = "vramsim-torch-memory-check/1"

# Families whose decoder layer the PyTorch model reproduces: RMSNorm, rotary, GQA, SwiGLU.
# qwen2 has biases on q/k/v (Qwen2Attention); qwen3 adds per-head q/k RMSNorm (Qwen3Attention).
SUPPORTED_MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3")

# The vramsim JSON fields this script reads (the test checks the built binary emits them).
TRAIN_FIELDS = ("peak_allocated_bytes", "peak_reserved_bytes", "model_state_bytes",
                "activation_bytes", "non_allocator_bytes", "total_memory_bytes", "step_time_s",
                "fits", "at_peak")
BUDGET_FIELDS = ("num_params", "weights_bytes", "activation_peak_bytes", "non_torch_bytes",
                 "cuda_context_bytes", "kv_bytes_per_token", "total_memory_bytes", "fits")


class PlanError(Exception):
    """A user-facing problem with the arguments or the model config (exit code 2)."""


# --- the model config -----------------------------------------------------------------------

def resolve_config_path(model: str) -> str:
    """A zoo id (`org/name`, case-insensitive) or a path to a config.json (or its folder)."""
    if os.path.isdir(model):
        model = os.path.join(model, "config.json")
    if os.path.isfile(model):
        return model
    wanted = model.replace("/", "__").lower() + ".json"
    if os.path.isdir(ZOO_DIR):
        for name in sorted(os.listdir(ZOO_DIR)):
            if name.lower() == wanted:
                return os.path.join(ZOO_DIR, name)
    raise PlanError(f"model '{model}' is neither a config.json path nor a zoo id in {ZOO_DIR}")


def load_config(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise PlanError(f"cannot read model config {path}: {e}") from e


def arch_from_config(cfg: dict) -> dict:
    """The numbers the PyTorch model needs, with Hugging Face's defaults where keys are absent."""
    model_type = cfg.get("model_type", "")
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise PlanError(f"model_type '{model_type}' is not supported; supported: "
                        f"{', '.join(SUPPORTED_MODEL_TYPES)} (dense Llama-style decoders)")
    try:
        hidden = int(cfg["hidden_size"])
        heads = int(cfg["num_attention_heads"])
        arch = {
            "model_type": model_type,
            "num_layers": int(cfg["num_hidden_layers"]),
            "hidden": hidden,
            "heads": heads,
            "kv_heads": int(cfg.get("num_key_value_heads") or heads),
            "head_dim": int(cfg.get("head_dim") or hidden // heads),
            "intermediate": int(cfg["intermediate_size"]),
            "vocab": int(cfg["vocab_size"]),
            "tie": bool(cfg.get("tie_word_embeddings", False)),
            "qkv_bias": bool(cfg.get("attention_bias", model_type == "qwen2")),
            "mlp_bias": bool(cfg.get("mlp_bias", False)),
            "qk_norm": model_type == "qwen3",
            "rms_eps": float(cfg.get("rms_norm_eps", 1e-5)),
            "rope_theta": float(cfg.get("rope_theta", 10000.0)),
            "max_positions": int(cfg.get("max_position_embeddings", 4096)),
        }
    except (KeyError, TypeError, ValueError) as e:
        raise PlanError(f"config lacks or mangles a field the model needs: {e}") from e
    if arch["heads"] % arch["kv_heads"]:
        raise PlanError("num_attention_heads must be a multiple of num_key_value_heads")
    return arch


def param_counts(arch: dict, num_layers: int | None = None) -> dict:
    """Parameters of the PyTorch model built from `arch` with `num_layers` decoder layers."""
    n = arch["num_layers"] if num_layers is None else num_layers
    h, q = arch["hidden"], arch["heads"] * arch["head_dim"]
    kv, i = arch["kv_heads"] * arch["head_dim"], arch["intermediate"]
    attn = h * (q + 2 * kv) + q * h
    if arch["qkv_bias"]:
        attn += q + 2 * kv
    mlp = 3 * h * i + (2 * i + h if arch["mlp_bias"] else 0)
    norms = 2 * h + (2 * arch["head_dim"] if arch["qk_norm"] else 0)
    per_layer = attn + mlp + norms
    embed = arch["vocab"] * h
    lm_head = 0 if arch["tie"] else embed
    layer_linear = h * (q + 2 * kv) + q * h + 3 * h * i  # matrices autocast copies to bf16
    return {
        "num_layers": n,
        "per_layer": per_layer,
        "embedding": embed,
        "lm_head": lm_head,
        "final_norm": h,
        "total": n * per_layer + embed + lm_head + h,
        # the bf16 copies AMP makes of every matmul weight (lm_head: the tied embedding too)
        "linear_weights": n * layer_linear + embed,
    }


def estimate_train_peak_bytes(arch: dict, num_layers: int, micro_batch: int, seq_len: int,
                              checkpointing: str) -> int:
    """A deliberately generous estimate of a training step's peak, used only to choose how many
    layers fit: 16 B/param of model state + 4 B/param for foreach AdamW's temporaries (one fp32
    list, e.g. the sqrt of exp_avg_sq), the AMP weight copies, 1.5x the stored activations of
    vramsim's shape-adapted formula in bf16 (activation_memory.hpp), fp32 logits 4 times over
    (bf16 logits, fp32 copy, log-softmax, its gradient) and 1 GiB of slack."""
    pc = param_counts(arch, num_layers)
    tokens = micro_batch * seq_len
    h, i = arch["hidden"], arch["intermediate"]
    q, kv = arch["heads"] * arch["head_dim"], arch["kv_heads"] * arch["head_dim"]
    layer = 2 * tokens * (4 * h + q + 2 * kv + q + 4 * i) + 4 * tokens * arch["heads"]
    stored = num_layers * layer if checkpointing == "none" else num_layers * 2 * tokens * h + layer
    logits = 14 * tokens * arch["vocab"]
    return int(20 * pc["total"] + 2 * pc["linear_weights"] + 1.5 * stored + layer + logits + GIB)


def estimate_decode_peak_bytes(arch: dict, num_layers: int, batch: int, prompt_len: int,
                               max_len: int) -> int:
    """bf16 weights, the preallocated KV cache and 3x one prefill layer's transients."""
    pc = param_counts(arch, num_layers)
    kv = num_layers * 2 * batch * arch["kv_heads"] * max_len * arch["head_dim"] * 2
    tokens = batch * prompt_len
    transient = 2 * tokens * (6 * arch["hidden"] + 4 * arch["intermediate"])
    return int(2 * pc["total"] + kv + 3 * transient + GIB)


def choose_num_layers(arch: dict, settings: dict, device_bytes: int) -> tuple[int, str]:
    """The most decoder layers (at most the config's) whose estimated training and decode peaks
    stay under fit_fraction of the device; with --num-layers, that number as given."""
    full = arch["num_layers"]
    if settings.get("num_layers"):
        n = int(settings["num_layers"])
        if not 1 <= n <= full:
            raise PlanError(f"--num-layers {n} outside 1..{full}")
        note = "" if n == full else f"--num-layers {n} of the config's {full}"
        return n, note
    limit = settings["fit_fraction"] * device_bytes

    def fits(n: int) -> bool:
        train = max(estimate_train_peak_bytes(arch, n, settings["micro_batch"],
                                              settings["seq_len"], c)
                    for c in settings["checkpointing"]) if settings["train"] else 0
        dec = (estimate_decode_peak_bytes(arch, n, settings["decode_batch"],
                                          settings["prompt_len"], settings["max_len"])
               if settings["decode"] else 0)
        return max(train, dec) <= limit

    best = 0
    for n in range(1, full + 1):
        if fits(n):
            best = n
    if best == 0:
        raise PlanError(f"even 1 layer is estimated above {settings['fit_fraction']:.0%} of "
                        f"{device_bytes / GIB:.1f} GiB: lower --micro-batch/--seq-len/"
                        "--decode-batch or pass --num-layers")
    note = "" if best == full else (
        f"scaled to {best} of {full} decoder layers so that the estimated peak stays under "
        f"{settings['fit_fraction']:.0%} of {device_bytes / GIB:.1f} GiB; hidden size, heads, "
        "vocabulary and every other dimension unchanged")
    return best, note


def scaled_config(cfg: dict, num_layers: int) -> dict:
    """The config with `num_layers` decoder layers, to hand to `vramsim --model PATH`."""
    out = dict(cfg)
    full = int(cfg["num_hidden_layers"])
    out["num_hidden_layers"] = num_layers
    name = cfg.get("_name_or_path", "model")
    if num_layers != full:
        out["_name_or_path"] = f"{name} ({num_layers} of {full} layers)"
        out["_vramsim_scaled"] = f"num_hidden_layers {full} -> {num_layers} by torch_memory_check.py"
    # per-layer lists (sliding-window patterns, MoE layer maps) would no longer match
    for key in ("layer_types",):
        if isinstance(out.get(key), list):
            out[key] = out[key][:num_layers]
    return out


def scaled_config_path(cfg: dict, num_layers: int, directory: str) -> str:
    base = cfg.get("_name_or_path", "model").replace("/", "__").replace(" ", "_")
    return os.path.join(directory, f"{base}.L{num_layers}.json")


def write_scaled_config(cfg: dict, num_layers: int, path: str) -> str:
    """Writes scaled_config(cfg, num_layers) to `path` (creating its folder); returns `path`."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(scaled_config(cfg, num_layers), f, indent=2)
        f.write("\n")
    return path


# --- the plan and the vramsim commands ------------------------------------------------------

def find_vramsim(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    for rel in ("build/vramsim", "build-calib/vramsim"):
        path = os.path.join(ROOT, rel)
        if os.access(path, os.X_OK):
            relative = os.path.relpath(path)
            return path if relative.startswith("..") else relative
    return shutil.which("vramsim")


def train_command(vramsim: str, config_path: str, gpu: str, micro_batch: int, seq_len: int,
                  checkpointing: str) -> list[str]:
    """`vramsim train` for one GPU, bf16-mixed AdamW: 16 B/param of model state (model_state.hpp)."""
    return [vramsim, "train", "--model", config_path, "--gpu", gpu, "--micro-batch",
            str(micro_batch), "--seq-len", str(seq_len), "--checkpointing", checkpointing,
            "--precision", "bf16-mixed", "--optimizer", "adamw", "--num-gpus", "1",
            "--format", "json"]


def budget_command(vramsim: str, config_path: str, gpu: str, batch: int, prompt_len: int,
                   max_len: int) -> list[str]:
    """`vramsim budget` sized like the decode run: its profile run of batch x prompt tokens is the
    prefill, max_num_seqs the batch, max_model_len the cache length; no CUDA graphs (eager)."""
    return [vramsim, "budget", "--model", config_path, "--gpu", gpu, "--dtype", "bf16",
            "--kv-cache-dtype", "bf16", "--max-model-len", str(max_len), "--max-num-seqs",
            str(batch), "--max-num-batched-tokens", str(batch * prompt_len), "--enforce-eager",
            "--no-suggestions", "--format", "json"]


def shell_line(cmd: list[str]) -> str:
    return " ".join(shlex.quote(c) for c in cmd)


def run_vramsim(cmd: list[str], timeout_s: int = 600) -> dict:
    """Runs one vramsim command and returns its JSON; RuntimeError with its stderr otherwise."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"{shell_line(cmd)}: {e}") from e
    if proc.returncode != 0:
        raise RuntimeError(f"{shell_line(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise RuntimeError(f"{shell_line(cmd)} printed no JSON: {e}") from e


def settings_from_args(args: argparse.Namespace) -> dict:
    s = {
        "gpu": args.gpu, "micro_batch": args.micro_batch, "seq_len": args.seq_len,
        "checkpointing": [c.strip() for c in args.checkpointing.split(",") if c.strip()],
        "decode_batch": args.decode_batch, "prompt_len": args.prompt_len,
        "gen_len": args.gen_len, "warmup_steps": args.warmup_steps,
        "timed_steps": args.timed_steps, "adamw_impl": args.adamw_impl, "norm": args.norm,
        "residual_dtype": args.residual_dtype, "seed": args.seed, "lr": args.lr,
        "fit_fraction": args.fit_fraction, "num_layers": args.num_layers,
        "train": not args.skip_train, "decode": not args.skip_decode, "quick": args.quick,
    }
    if args.quick:  # tiny shapes; explicit flags still win over these
        s["num_layers"] = args.num_layers or 2
        for key, value in (("micro_batch", 1), ("seq_len", 256), ("decode_batch", 4),
                           ("prompt_len", 64), ("gen_len", 16), ("timed_steps", 2)):
            if getattr(args, key) == PARSER_DEFAULTS[key]:
                s[key] = value
    for c in s["checkpointing"]:
        if c not in ("none", "full"):
            raise PlanError(f"--checkpointing takes none and/or full, not '{c}'")
    for key in ("micro_batch", "seq_len", "decode_batch", "prompt_len", "gen_len", "timed_steps"):
        if s[key] < 1:
            raise PlanError(f"--{key.replace('_', '-')} must be >= 1")
    if s["warmup_steps"] < 0:
        raise PlanError("--warmup-steps must be >= 0")
    s["max_len"] = s["prompt_len"] + s["gen_len"]
    return s


def build_plan(model: str, settings: dict, device_bytes: int, out_dir: str,
               vramsim: str | None) -> dict:
    """Everything decided before touching the GPU: model, layers, cases, vramsim commands."""
    cfg_path = resolve_config_path(model)
    cfg = load_config(cfg_path)
    arch = arch_from_config(cfg)
    for length in (settings["seq_len"], settings["max_len"]):
        if length > arch["max_positions"]:
            raise PlanError(f"{length} tokens exceed max_position_embeddings "
                            f"{arch['max_positions']}")
    num_layers, note = choose_num_layers(arch, settings, device_bytes)
    config_out = scaled_config_path(cfg, num_layers, os.path.join(out_dir, "configs"))
    exe = vramsim or "vramsim"
    plan = {
        "model": cfg.get("_name_or_path", model), "config_source": cfg_path,
        "config": cfg, "arch": arch, "original_num_layers": arch["num_layers"],
        "num_layers": num_layers, "scaled": num_layers != arch["num_layers"],
        "scaling_note": note, "scaled_config_path": config_out,
        "params": param_counts(arch, num_layers), "planning_device_bytes": device_bytes,
        "settings": settings, "train_cases": [], "decode_case": None,
    }
    if settings["train"]:
        for c in settings["checkpointing"]:
            plan["train_cases"].append({
                "name": f"train checkpointing={c}", "checkpointing": c,
                "micro_batch": settings["micro_batch"], "seq_len": settings["seq_len"],
                "estimated_peak_bytes": estimate_train_peak_bytes(
                    arch, num_layers, settings["micro_batch"], settings["seq_len"], c),
                "vramsim_command": train_command(exe, config_out, settings["gpu"],
                                                 settings["micro_batch"], settings["seq_len"], c),
            })
    if settings["decode"]:
        plan["decode_case"] = {
            "name": "decode", "batch": settings["decode_batch"],
            "prompt_len": settings["prompt_len"], "gen_len": settings["gen_len"],
            "max_len": settings["max_len"],
            "estimated_peak_bytes": estimate_decode_peak_bytes(
                arch, num_layers, settings["decode_batch"], settings["prompt_len"],
                settings["max_len"]),
            "vramsim_command": budget_command(exe, config_out, settings["gpu"],
                                              settings["decode_batch"], settings["prompt_len"],
                                              settings["max_len"]),
        }
    return plan


def plan_text(plan: dict) -> str:
    s, p = plan["settings"], plan["params"]
    lines = [
        f"model            {plan['model']}  ({plan['config_source']})",
        f"layers           {plan['num_layers']} of {plan['original_num_layers']}"
        + (f"  -- {plan['scaling_note']}" if plan["scaling_note"] else ""),
        f"parameters       {p['total']:,} (PyTorch model as built)",
        f"scaled config    {plan['scaled_config_path']}",
        f"planned against  {plan['planning_device_bytes'] / GIB:.1f} GiB device memory, "
        f"fit fraction {s['fit_fraction']}",
        f"training         bf16 autocast, fp32 parameters/grads, AdamW ({s['adamw_impl']}), "
        f"RMSNorm {s['norm']}, residual {s['residual_dtype']}, {s['warmup_steps']} warm-up "
        f"steps, 1 measured, {s['timed_steps']} timed",
    ]
    for case in plan["train_cases"]:
        lines.append(f"  {case['name']}: micro-batch {case['micro_batch']}, seq {case['seq_len']}"
                     f", estimated peak <= {case['estimated_peak_bytes'] / GIB:.1f} GiB")
        lines.append(f"    {shell_line(case['vramsim_command'])}")
    d = plan["decode_case"]
    if d:
        lines.append(f"decode           bf16 weights, batch {d['batch']}, prompt {d['prompt_len']},"
                     f" {d['gen_len']} new tokens, KV cache [layers, 2, {d['batch']}, kv_heads, "
                     f"{d['max_len']}, head_dim] bf16, estimated peak <= "
                     f"{d['estimated_peak_bytes'] / GIB:.1f} GiB")
        lines.append(f"    {shell_line(d['vramsim_command'])}")
    return "\n".join(lines)


def run_simulations(plan: dict) -> dict:
    """Writes the scaled config and runs every vramsim command of the plan: {case name: JSON or
    {"error": message}}."""
    write_scaled_config(plan["config"], plan["num_layers"], plan["scaled_config_path"])
    results = {}
    cases = plan["train_cases"] + ([plan["decode_case"]] if plan["decode_case"] else [])
    for case in cases:
        try:
            results[case["name"]] = run_vramsim(case["vramsim_command"])
        except RuntimeError as e:
            results[case["name"]] = {"error": str(e)}
    return results


# --- the command line -------------------------------------------------------------------------

PARSER_DEFAULTS = {
    "model": "meta-llama/Llama-3.2-1B", "gpu": "h200", "micro_batch": 2, "seq_len": 2048,
    "checkpointing": "none,full", "decode_batch": 64, "prompt_len": 1024, "gen_len": 128,
    "warmup_steps": 2, "timed_steps": 3, "adamw_impl": "default", "norm": "fused",
    "residual_dtype": "bf16", "seed": 1234, "lr": 1e-5, "fit_fraction": 0.85,
}

CONVENTIONS = [
    "Training matches vramsim's bf16-mixed AdamW at 16 B/param of model state with PyTorch AMP's "
    "layout: fp32 parameters (4) + fp32 gradients (4) + AdamW exp_avg and exp_avg_sq (4 + 4), "
    "matmuls under torch.autocast(bf16). vramsim splits the same 16 B as bf16 params (2) + bf16 "
    "grads (2) + fp32 master (4) + Adam (8). AMP also makes bf16 copies of the matmul weights "
    "(2 B/param) that autograd keeps until backward; vramsim has no such term.",
    "Relative error = (vramsim - measured) / measured; positive means vramsim overestimates.",
    "Activation checkpointing: torch.utils.checkpoint per decoder layer, use_reentrant=False "
    "(vramsim --checkpointing full keeps each layer's input).",
    "Decode has no exact vramsim analogue: vramsim budget models vLLM's start-up accounting. Its "
    "weights, activation peak (profile run of batch x prompt tokens = the prefill), and "
    "kv_bytes_per_token x batch x max_len stand for the weights, the prefill transients and the "
    "preallocated cache; non_torch + cuda_context for what lies outside PyTorch's allocator.",
]


def make_parser() -> argparse.ArgumentParser:
    d = PARSER_DEFAULTS
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", default=d["model"], help="zoo id or config.json path")
    p.add_argument("--out", default="torch_memory_check_out", help="output folder")
    p.add_argument("--gpu", default=d["gpu"], help="vramsim device id of this GPU")
    p.add_argument("--vramsim", default=None, help="vramsim binary (default: build/vramsim)")
    p.add_argument("--micro-batch", type=int, default=d["micro_batch"])
    p.add_argument("--seq-len", type=int, default=d["seq_len"])
    p.add_argument("--checkpointing", default=d["checkpointing"], help="none and/or full")
    p.add_argument("--decode-batch", type=int, default=d["decode_batch"])
    p.add_argument("--prompt-len", type=int, default=d["prompt_len"])
    p.add_argument("--gen-len", type=int, default=d["gen_len"])
    p.add_argument("--warmup-steps", type=int, default=d["warmup_steps"])
    p.add_argument("--timed-steps", type=int, default=d["timed_steps"])
    p.add_argument("--adamw-impl", choices=("default", "foreach", "fused", "for-loop"),
                   default=d["adamw_impl"], help="default = torch's choice (foreach on CUDA)")
    p.add_argument("--norm", choices=("fused", "eager"), default=d["norm"],
                   help="fused: RMSNorm saving only its input and 1/rms (as fused kernels do)")
    p.add_argument("--residual-dtype", choices=("bf16", "fp32"), default=d["residual_dtype"],
                   help="bf16 casts the embedding output (vramsim's 2-byte activations); fp32 "
                        "keeps plain AMP's fp32 residual stream")
    p.add_argument("--num-layers", type=int, default=None, help="decoder layers (default: fit)")
    p.add_argument("--fit-fraction", type=float, default=d["fit_fraction"])
    p.add_argument("--device-memory-gib", type=float, default=None,
                   help="plan against this much memory (dry-run/simulate-only; default H200)")
    p.add_argument("--seed", type=int, default=d["seed"])
    p.add_argument("--lr", type=float, default=d["lr"])
    p.add_argument("--skip-train", action="store_true")
    p.add_argument("--skip-decode", action="store_true")
    p.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    p.add_argument("--dry-run", action="store_true", help="print the plan; run nothing")
    p.add_argument("--simulate-only", action="store_true",
                   help="run vramsim and write the report without measurements")
    return p


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=False)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def case_entry(case: dict, sim: dict) -> dict:
    """A report entry for one planned case with its vramsim result (fields TRAIN/BUDGET_FIELDS)."""
    entry = {k: v for k, v in case.items() if k not in ("vramsim_command",)}
    entry["vramsim_command"] = case["vramsim_command"]
    entry["vramsim_line"] = shell_line(case["vramsim_command"])
    fields = BUDGET_FIELDS if case["name"] == "decode" else TRAIN_FIELDS
    entry["vramsim"] = ({"error": sim["error"]} if "error" in sim
                        else {k: sim.get(k) for k in fields})
    if case["name"] == "decode" and "error" not in sim:
        from torch_memory_report import simulated_decode
        entry["vramsim"]["decode_analogue"] = simulated_decode(sim, case["batch"], case["max_len"])
    entry["error"] = sim.get("error")
    attach_measurement(entry, {})  # vramsim's side of every row; measured values still empty
    entry["measured"] = None
    return entry


def attach_measurement(entry: dict, measured: dict) -> None:
    from torch_memory_report import compare_decode, compare_train
    sim = entry["vramsim"] if "error" not in entry["vramsim"] else {}
    entry["measured"] = measured
    if entry["name"] == "decode":
        entry["comparison"] = compare_decode(measured, sim, entry["batch"], entry["max_len"])
    else:
        entry["comparison"] = compare_train(measured, sim)


def new_report(plan: dict, argv: list[str], environment: dict, status: str) -> dict:
    model = {k: plan[k] for k in ("model", "config_source", "num_layers", "original_num_layers",
                                  "scaled", "scaling_note", "scaled_config_path", "params", "arch")}
    return {
        "schema": SCHEMA, "status": status,
        "command": shell_line([sys.executable, os.path.relpath(__file__, ROOT)] + argv),
        "created_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ"),
        "git_commit": git_commit(), "environment": environment, "model": model,
        "settings": plan["settings"], "notes": list(CONVENTIONS), "cases": [],
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = make_parser().parse_args(argv)
    sys.path.insert(0, HERE)
    from torch_memory_report import write_report
    try:
        settings = settings_from_args(args)
        vramsim = find_vramsim(args.vramsim)
        gpu = None
        environment = {"python": sys.version.split()[0]}
        device_bytes = int(args.device_memory_gib * GIB) if args.device_memory_gib else \
            H200_TOTAL_BYTES
        if not (args.dry_run or args.simulate_only):
            try:
                import torch_memory_gpu as gpu  # imports torch
            except ImportError as e:
                raise PlanError(f"PyTorch is needed for a measurement ({e}); use --dry-run or "
                                "--simulate-only without it") from e
            try:
                environment.update(gpu.environment())
            except RuntimeError as e:
                raise PlanError(str(e)) from e
            device_bytes = environment["device_total_bytes"]
        plan = build_plan(args.model, settings, device_bytes, args.out, vramsim)
    except PlanError as e:
        print(f"torch_memory_check: {e}", file=sys.stderr)
        return 2
    print(plan_text(plan), flush=True)
    if args.dry_run:
        return 0
    if vramsim is None:
        print("torch_memory_check: no vramsim binary (build it or pass --vramsim)", file=sys.stderr)
        return 2
    status = "simulated only: no measurements" if gpu is None else "running"
    report = new_report(plan, argv, environment, status)
    sims = run_simulations(plan)
    cases = plan["train_cases"] + ([plan["decode_case"]] if plan["decode_case"] else [])
    report["cases"] = [case_entry(c, sims[c["name"]]) for c in cases]
    write_report(report, args.out)
    failed = sum(1 for e in report["cases"] if e["error"])
    if gpu is not None:
        for entry in report["cases"]:
            print(f"== {entry['name']}", flush=True)
            try:
                measured = (gpu.measure_decode(plan, entry) if entry["name"] == "decode"
                            else gpu.measure_train(plan, entry))
                attach_measurement(entry, measured)
            except Exception as e:  # noqa: BLE001 -- record any failure, go on to the next case
                import traceback
                traceback.print_exc()
                entry["error"] = f"{type(e).__name__}: {e}"
                failed += 1
            finally:
                gpu.release_memory()
            write_report(report, args.out)
        report["status"] = "measured" if failed == 0 else f"measured with {failed} failed case(s)"
        report["environment"].update(gpu.environment_after())
    paths = write_report(report, args.out)
    print(f"wrote {paths[0]} and {paths[1]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
