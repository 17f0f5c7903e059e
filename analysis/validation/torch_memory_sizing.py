"""The model side of torch_memory_check.py's plan, without torch: a zoo config read into the
numbers the PyTorch decoder needs, its parameter count, generous peak estimates, the number of
decoder layers that fits a device, and the scaled config.json handed to `vramsim --model PATH`.
"""

from __future__ import annotations

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ZOO_DIR = os.path.join(ROOT, "scenarios", "models")
GIB = 1024 ** 3
# Families whose decoder layer the PyTorch model reproduces: RMSNorm, rotary, GQA, SwiGLU.
# qwen2 has biases on q/k/v (Qwen2Attention); qwen3 adds per-head q/k RMSNorm (Qwen3Attention).
SUPPORTED_MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3")

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
