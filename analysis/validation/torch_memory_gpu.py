"""The measurements of torch_memory_check.py on a CUDA device: training steps and a batched
decode of the decoder in torch_memory_model.py, read through PyTorch's allocator statistics
(torch.cuda.max_memory_allocated / max_memory_reserved) and the driver (mem_get_info).

Imported only when a measurement runs (it imports torch).
"""

from __future__ import annotations

import gc
import os
import statistics
import subprocess

import torch

import torch_memory_model as tm

STAT_KEYS = ("num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free",
             "segment.all.peak", "inactive_split_bytes.all.peak")


def _driver_version() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=False)
        return out.stdout.strip().splitlines()[0] if out.stdout.strip() else None
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return None


def device_used() -> int:
    free, total = torch.cuda.mem_get_info()
    return int(total - free)


def environment() -> dict:
    """Versions and the device; creates the CUDA context. RuntimeError without a usable GPU."""
    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False: no usable CUDA device")
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    dev = torch.cuda.current_device()
    try:
        cudnn = torch.backends.cudnn.version()
    except Exception:  # noqa: BLE001 -- informational only
        cudnn = None
    return {
        "torch_version": torch.__version__, "cuda_version": torch.version.cuda,
        "cudnn_version": cudnn, "driver_version": _driver_version(),
        "device_name": torch.cuda.get_device_name(dev),
        "device_capability": list(torch.cuda.get_device_capability(dev)),
        "device_total_bytes": int(total), "device_used_at_start_bytes": int(total - free),
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
        "visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }


def environment_after() -> dict:
    return {"attention": dict(tm.ATTENTION)}


def release_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def allocator_stats() -> dict:
    stats = torch.cuda.memory_stats()
    return {k: stats.get(k) for k in STAT_KEYS}


def tensor_bytes(tensors) -> int:
    return int(sum(t.numel() * t.element_size() for t in tensors if t is not None))


def _storage(t):
    try:
        s = t.untyped_storage()
        return s.data_ptr(), int(s.nbytes())
    except Exception:  # noqa: BLE001 -- older torch: count the view
        return t.data_ptr(), int(t.numel() * t.element_size())


class SavedTensorCensus:
    """Counts the distinct storages autograd saves for backward during a forward, split into
    parameters (no extra memory), bf16 copies of weight matrices (AMP's casts, recognised by a
    2-D bf16 tensor of a parameter's shape or its transpose) and everything else."""

    def __init__(self, model):
        self.param_ptrs = {_storage(p)[0] for p in model.parameters()}
        self.shapes = {tuple(p.shape) for p in model.parameters() if p.dim() == 2}
        self.seen = {}
        self._ctx = None

    def pack(self, t):
        ptr, nbytes = _storage(t)
        if ptr not in self.seen and t.is_cuda:
            if ptr in self.param_ptrs:
                kind = "parameters"
            elif t.dtype == torch.bfloat16 and t.dim() == 2 and (
                    tuple(t.shape) in self.shapes or tuple(t.shape)[::-1] in self.shapes):
                kind = "amp_weight_copies"
            else:
                kind = "activations"
            self.seen[ptr] = (nbytes, kind)
        return t

    @staticmethod
    def unpack(t):
        return t

    def __enter__(self):
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self.pack, self.unpack)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)

    def totals(self) -> dict:
        out = {"parameters": 0, "amp_weight_copies": 0, "activations": 0}
        for nbytes, kind in self.seen.values():
            out[kind] += nbytes
        return out


def make_adamw(params, settings: dict):
    params = list(params)
    impl = settings["adamw_impl"]
    kwargs = {"lr": settings["lr"]}
    if impl == "fused":
        kwargs["fused"] = True
    elif impl == "foreach":
        kwargs["foreach"] = True
    elif impl == "for-loop":
        kwargs["foreach"] = False
    opt = torch.optim.AdamW(params, **kwargs)
    info = {"requested": impl, "kwargs": {k: v for k, v in kwargs.items() if k != "lr"}}
    if impl == "default":
        try:  # what torch.optim picks when neither flag is given
            from torch.optim.optimizer import _default_to_fused_or_foreach
            fused, foreach = _default_to_fused_or_foreach(params, False, False)
            info["resolved"] = {"fused": bool(fused), "foreach": bool(foreach)}
        except Exception as e:  # noqa: BLE001 -- informational only
            info["resolved"] = f"unknown ({type(e).__name__})"
    return opt, info


def _prepare(plan: dict) -> None:
    if tm.ATTENTION.get("probed"):
        return
    info = tm.probe_attention(plan["arch"])
    tm.ATTENTION["probed"] = True
    print(f"attention: backend {info['backend']}, GQA {info['gqa']}", flush=True)


def _build(plan: dict, dtype, checkpointing: bool, positions: int):
    s = plan["settings"]
    fused = s["norm"] == "fused"
    if fused:
        err = tm.check_fused_norm()
        tm.ATTENTION["fused_norm_check_max_abs_error"] = err
        if not err < 1e-4:
            print(f"warning: fused RMSNorm differs from eager by {err}; using eager", flush=True)
            fused = False
    torch.manual_seed(s["seed"])
    model = tm.Decoder(plan["arch"], plan["num_layers"], positions, fused_norm=fused,
                       checkpointing=checkpointing, residual_bf16=s["residual_dtype"] == "bf16",
                       device="cuda", dtype=dtype)
    n = sum(p.numel() for p in model.parameters())
    if n != plan["params"]["total"]:
        print(f"warning: model has {n:,} parameters, the plan counted "
              f"{plan['params']['total']:,}", flush=True)
    return model, n, fused


def _phase_end(record: dict, name: str) -> None:
    torch.cuda.synchronize()
    record["allocated"][name] = int(torch.cuda.memory_allocated())
    record["peak_allocated"][name] = int(torch.cuda.max_memory_allocated())
    record["peak_reserved"][name] = int(torch.cuda.max_memory_reserved())
    torch.cuda.reset_peak_memory_stats()


def measure_train(plan: dict, case: dict) -> dict:
    """Warm-up steps, a census of saved tensors, then the measured step phase by phase (forward,
    backward, optimizer; the peak of the step is the largest phase peak), then timed steps."""
    _prepare(plan)
    s = plan["settings"]
    release_memory()
    model, num_params, fused = _build(plan, torch.float32, case["checkpointing"] == "full",
                                      case["seq_len"])
    opt, adamw = make_adamw(model.parameters(), s)
    gen = torch.Generator(device="cuda").manual_seed(s["seed"])
    ids = torch.randint(0, plan["arch"]["vocab"], (case["micro_batch"], case["seq_len"] + 1),
                        device="cuda", generator=gen)
    inputs, targets = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()
    del ids

    def step():
        with tm.attention_context():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(inputs, targets)
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()  # a tensor: reading it here would time a host sync too

    losses = [float(step()) for _ in range(s["warmup_steps"])]
    census = {}
    try:  # a separate forward+backward, so that the hooks cannot disturb the measured step
        with tm.attention_context():
            with SavedTensorCensus(model) as counter:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = model(inputs, targets)
            loss.backward()
        census = counter.totals()
    except Exception as e:  # noqa: BLE001 -- the census is informational
        census = {"error": f"{type(e).__name__}: {e}"}
    loss = counter = None
    opt.zero_grad(set_to_none=True)
    gc.collect()  # the census's hooks may leave reference cycles through saved outputs
    torch.cuda.synchronize()

    rec = {"allocated": {}, "peak_allocated": {}, "peak_reserved": {}}
    before = int(torch.cuda.memory_allocated())
    torch.cuda.reset_peak_memory_stats()
    with tm.attention_context():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(inputs, targets)
        _phase_end(rec, "forward")
        loss.backward()
        _phase_end(rec, "backward")
    grads = tensor_bytes(p.grad for p in model.parameters())
    opt.step()
    _phase_end(rec, "optimizer")
    losses.append(float(loss.detach()))
    loss = None
    params = tensor_bytes(model.parameters())
    states = tensor_bytes(t for st in opt.state.values() for t in st.values()
                          if torch.is_tensor(t) and t.is_cuda)
    after_step = int(torch.cuda.memory_allocated())
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    used, reserved = device_used(), int(torch.cuda.memory_reserved())
    after_zero = int(torch.cuda.memory_allocated())
    stats = allocator_stats()

    times = []
    for _ in range(s["timed_steps"]):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        last = step()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
        losses.append(float(last))

    retained = rec["allocated"]["forward"] - before
    amp_copies = census.get("amp_weight_copies")
    amp_source = "saved-tensor census"
    if amp_copies is None:  # the census failed: what AMP would keep, from the parameter count
        pc = plan["params"]
        amp_copies = 2 * (pc["linear_weights"] if case["checkpointing"] == "none"
                          else pc["embedding"])
        amp_source = "estimate (2 B per matmul weight kept for backward)"
    return {
        "num_params": num_params, "fused_norm": fused, "adamw": adamw, "losses": losses,
        "peak_allocated_bytes": max(rec["peak_allocated"].values()),
        "peak_reserved_bytes": max(rec["peak_reserved"].values()),
        "device_used_bytes": used, "reserved_after_step_bytes": reserved,
        "non_allocator_bytes": used - reserved,
        "params_bytes": params, "grads_bytes": grads, "optimizer_state_bytes": states,
        "model_state_bytes": params + grads + states,
        "allocated_before_forward_bytes": before,
        "forward_retained_bytes": retained,
        "amp_weight_copy_bytes": amp_copies, "amp_weight_copy_source": amp_source,
        "activation_bytes": retained - amp_copies,
        "saved_tensor_census_bytes": census,
        "steady_allocated_after_step_bytes": after_step,
        "allocated_after_zero_grad_bytes": after_zero,
        "phase_peak_allocated_bytes": rec["peak_allocated"],
        "phase_peak_reserved_bytes": rec["peak_reserved"],
        "phase_end_allocated_bytes": rec["allocated"],
        "step_time_s": statistics.median(times) if times else None, "step_times_s": times,
        "allocator_stats": stats,
    }


def measure_decode(plan: dict, case: dict) -> dict:
    """bf16 weights, a preallocated cache [layers, 2, batch, kv_heads, max_len, head_dim]; one
    warm-up pass, then the measured prefill of batch x prompt tokens and gen_len decode steps."""
    _prepare(plan)
    s, arch = plan["settings"], plan["arch"]
    release_memory()
    model, num_params, _ = _build(plan, torch.bfloat16, False, case["max_len"])
    model.eval()
    model.requires_grad_(False)
    weights = tensor_bytes(model.parameters())
    batch, prompt_len, gen_len = case["batch"], case["prompt_len"], case["gen_len"]
    cache = torch.zeros((plan["num_layers"], 2, batch, arch["kv_heads"], case["max_len"],
                         arch["head_dim"]), dtype=torch.bfloat16, device="cuda")
    gen = torch.Generator(device="cuda").manual_seed(s["seed"])
    prompts = torch.randint(0, arch["vocab"], (batch, prompt_len), device="cuda", generator=gen)

    def run(steps: int, rec: dict | None):
        times = []
        with torch.no_grad(), tm.attention_context():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            tok = model.decode_step(prompts, cache, 0).argmax(-1)
            end.record()
            if rec is not None:
                _phase_end(rec, "prefill")
                rec["prefill_time_s"] = start.elapsed_time(end) / 1e3
            for i in range(steps):
                start.record()
                tok = model.decode_step(tok, cache, prompt_len + i).argmax(-1)
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end) / 1e3)
            if rec is not None:
                _phase_end(rec, "decode")
        return times

    run(min(gen_len, 4), None)
    torch.cuda.synchronize()
    before = int(torch.cuda.memory_allocated())
    torch.cuda.reset_peak_memory_stats()
    rec = {"allocated": {}, "peak_allocated": {}, "peak_reserved": {}}
    times = run(gen_len, rec)
    used, reserved = device_used(), int(torch.cuda.memory_reserved())
    peak = max(rec["peak_allocated"].values())
    kv = int(cache.numel() * cache.element_size())
    return {
        "num_params": num_params, "weights_bytes": weights, "kv_cache_bytes": kv,
        "kv_cache_shape": list(cache.shape),
        "allocated_before_bytes": before, "other_resident_bytes": before - weights - kv,
        "peak_allocated_bytes": peak,
        "peak_reserved_bytes": max(rec["peak_reserved"].values()),
        "activation_peak_bytes": peak - before,
        "device_used_bytes": used, "reserved_after_bytes": reserved,
        "non_allocator_bytes": used - reserved,
        "phase_peak_allocated_bytes": rec["peak_allocated"],
        "phase_peak_reserved_bytes": rec["peak_reserved"],
        "prefill_time_s": rec.get("prefill_time_s"),
        "decode_step_time_s": statistics.median(times) if times else None,
        "allocator_stats": allocator_stats(),
    }
