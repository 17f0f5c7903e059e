#!/usr/bin/env python3
"""Ground truth for vramsim's memory model: real PyTorch training steps and a real batched decode
on the GPU at hand, compared with `vramsim train` and `vramsim budget` for the same shapes.

    python3 analysis/validation/torch_memory_check.py --model meta-llama/Llama-3.2-1B --out DIR
    ... --quick            tiny sizes: a smoke test
    ... --dry-run          print the plan and the vramsim commands; needs neither torch nor a GPU
    ... --simulate-only    run only the vramsim side and write the report with no measurements

Without torch: this file (command line, plan, vramsim commands), torch_memory_sizing.py (model
config, layer scaling, scaled config) and torch_memory_report.py (comparison, JSON and markdown).
With torch, imported only when a measurement runs: torch_memory_model.py (the decoder) and
torch_memory_gpu.py (the measurements). See README.md in this folder for what is measured and
how each number maps onto vramsim's JSON fields.
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
GIB = 1024 ** 3
# topologies/devices/h200.toml as `vramsim train --gpu h200` reports it (total_memory_bytes);
# used only to plan a --dry-run or --simulate-only run, where no device is queried.
H200_TOTAL_BYTES = 150109880320
SCHEMA = "vramsim-torch-memory-check/1"
sys.path.insert(0, HERE)

from torch_memory_sizing import (  # noqa: E402  (after the path; re-exported for the tests)
    PlanError, arch_from_config, choose_num_layers, estimate_decode_peak_bytes,
    estimate_train_peak_bytes, load_config, param_counts, resolve_config_path,
    scaled_config_path, write_scaled_config)

# The vramsim JSON fields this script reads (the test checks the built binary emits them).
TRAIN_FIELDS = ("peak_allocated_bytes", "peak_reserved_bytes", "model_state_bytes",
                "activation_bytes", "non_allocator_bytes", "total_memory_bytes", "step_time_s",
                "fits", "at_peak")
BUDGET_FIELDS = ("num_params", "weights_bytes", "activation_peak_bytes", "non_torch_bytes",
                 "cuda_context_bytes", "kv_bytes_per_token", "total_memory_bytes", "fits")


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
            except Exception as e:  # noqa: BLE001 -- ImportError, or a broken CUDA install
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
