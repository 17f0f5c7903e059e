#!/usr/bin/env python3
"""Writes h100_fixture_profile.json: a SYNTHETIC calibration profile for tests (no GPU ran).

Every time comes from a smooth, stated formula with H100-SXM-like constants, rounded to 4
significant digits, so the tests can predict values exactly and check interpolation behaviour.
Re-run after changing it: python3 make_fixture_profile.py > h100_fixture_profile.json
"""
import json

def sig(x):
    return float(f"{x:.4g}")

def timing(t):
    t = sig(t)
    return {"median_s": t, "min_s": sig(t * 0.98), "max_s": sig(t * 1.05), "q1_s": sig(t * 0.99),
            "q3_s": sig(t * 1.01), "num_repetitions": 20}

MiB = 1 << 20
copies = []
copy_bw = {  # kind: (latency s, bandwidth of the traffic B/s, traffic factor)
    "device-kernel": (5e-6, 2.90e12, 2), "device-memcpy": (5e-6, 2.95e12, 2),
    "h2d-pinned": (10e-6, 55e9, 1), "h2d-pageable": (20e-6, 25e9, 1),
    "d2h-pinned": (10e-6, 53e9, 1), "d2h-pageable": (20e-6, 20e9, 1)}
for kind, (lat, bw, f) in copy_bw.items():
    for mib in (1, 4, 16, 64, 256, 1024):
        b = mib * MiB
        copies.append({"kind": kind, "bytes": b, "timing": timing(lat + f * b / bw),
                       "check": "passed"})

# Llama-3.1-8B linear layers (n = out_features, k = in_features) at TP 1 and 2.
shapes = []
for tp in (1, 2):
    for name, n, k in (("q_proj", 4096, 4096), ("k_proj", 1024, 4096), ("v_proj", 1024, 4096),
                       ("o_proj", 4096, 4096), ("gate_proj", 14336, 4096),
                       ("up_proj", 14336, 4096), ("down_proj", 4096, 14336),
                       ("lm_head", 128256, 4096)):
        col = name not in ("o_proj", "down_proj")
        shape = (n // tp, k) if col else (n, k // tp)
        if name == "lm_head" and tp == 2:
            shape = (64128, 4096)
        if shape not in [s[:2] for s in shapes]:
            shapes.append((shape[0], shape[1], f"meta-llama/Llama-3.1-8B tp{tp} {name}"))
gemms = []
for n, k, label in shapes:
    for m in (1, 8, 64, 512, 4096, 16384):
        t = 4e-6 + max(2 * m * n * k / 700e12, (m * k + k * n + m * n) * 2 / 2.9e12)
        gemms.append({"dtype": "bf16", "m": m, "n": n, "k": k, "label": label,
                      "timing": timing(t), "check": "passed"})

decode = []
for b in (1, 4, 16, 64, 256):
    for c in (128, 512, 2048, 8192, 32768):
        kv = b * c * 2 * 8 * 128 * 2
        decode.append({"batch": b, "context": c, "num_q_heads": 32, "num_kv_heads": 8,
                       "head_dim": 128, "block_size": 16, "kv_dtype": "bf16",
                       "timing": timing(3e-6 + kv / 2.3e12), "check": "passed"})

prefill = []
for s in (128, 512, 2048, 8192, 32768):
    flops = 4 * 32 * 128 * s * (s + 1) / 2
    prefill.append({"batch": 1, "seq_len": s, "num_q_heads": 32, "num_kv_heads": 8,
                    "head_dim": 128, "dtype": "bf16", "implementation": "unfused-cublas",
                    "timing": timing(10e-6 + flops / 400e12), "check": "passed"})

factor = {"all-reduce": lambda n: 2 * (n - 1) / n, "all-gather": lambda n: (n - 1) / n,
          "reduce-scatter": lambda n: (n - 1) / n, "broadcast": lambda n: 1.0,
          "send-recv": lambda n: 1.0}
colls = []
for n in (1, 2, 8):
    for op, fac in factor.items():
        if n == 1 and op == "send-recv":
            continue
        for e in range(3, 31, 2):  # 8 B to 1 GiB, x4 steps
            b = 1 << e
            if n == 1:
                t = 4e-6 + b / 1.4e12  # one rank: a local copy (or nothing) plus the launch
            else:
                t = 8e-6 * (2 if op == "all-reduce" else 1) + fac(n) * b / 360e9
            colls.append({"op": op, "num_ranks": n, "num_nodes": 1, "bytes": b, "dtype": "fp32",
                          "timing": timing(t), "check": "passed"})

profile = {
    "format": "vramsim-calibration-profile", "format_version": 1,
    "device_id": "h100-sxm", "synthetic": True,
    "note": "SYNTHETIC TEST FIXTURE, not a measurement: times from smooth formulas with "
            "H100-SXM-like constants (tests/hardware/data/make_fixture_profile.py)",
    "identity": {"name": "NVIDIA H100 80GB HBM3 (fixture)", "model": "fixture",
                 "driver_version": "fixture", "cuda_runtime_version": "13.0",
                 "nccl_version": "2.27.7", "date": "2025-01-01T00:00:00Z",
                 "command": "tests/hardware/data/make_fixture_profile.py", "num_devices": 8},
    "memory": {"total_bytes": 85045477376, "free_bytes": 84487634944,
               "cuda_context_bytes": 557842432, "cublas_handle_bytes": 4194304,
               "cublas_workspace_bytes": 33554432, "nccl_communicator_bytes": 1610612736,
               "nccl_communicator_ranks": 8, "allocation_granularity_bytes": 2097152},
    "copy": copies, "gemm": gemms, "decode_attention": decode, "prefill_attention": prefill,
    "collectives": colls,
}
print(json.dumps(profile, indent=1))
