"""A Llama-style decoder in plain PyTorch for torch_memory_check.py: RMSNorm, rotary embeddings,
grouped-query attention through F.scaled_dot_product_attention, a SwiGLU MLP, tied or untied
lm_head, a training forward (optionally checkpointed per layer) and a KV-cache decode step.

Imported only on the GPU machine (it imports torch at module level).
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

# How attention runs, decided once by probe_attention(): backend "flash" (only the flash kernel
# allowed, so that no s x s matrix can appear) or "default" (PyTorch's dispatch), and GQA
# "native" (enable_gqa=True, K/V never expanded in memory), "expanded" (repeat_interleave) or
# "none" (as many KV heads as query heads).
ATTENTION = {"backend": "default", "gqa": "none", "tried": []}


def backend_context(backend: str):
    """A context manager that allows only the flash SDPA kernel, or changes nothing."""
    if backend != "flash":
        return contextlib.nullcontext()
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel  # torch >= 2.3
        return sdpa_kernel([SDPBackend.FLASH_ATTENTION])
    except ImportError:
        return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False,
                                              enable_mem_efficient=False)


def attention_context():
    return backend_context(ATTENTION["backend"])


def attend(q, k, v, causal: bool, gqa: str | None = None):
    """q [b, H, s, d], k and v [b, KV, t, d] -> [b, H, s, d]."""
    gqa = ATTENTION["gqa"] if gqa is None else gqa
    if gqa == "native":
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    if gqa == "expanded":
        rep = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def _try_attention(backend: str, gqa: str, heads: int, kv_heads: int, head_dim: int) -> None:
    dev, bf16 = "cuda", torch.bfloat16
    with backend_context(backend):
        q = torch.randn(2, heads, 64, head_dim, device=dev, dtype=bf16, requires_grad=True)
        k = torch.randn(2, kv_heads, 64, head_dim, device=dev, dtype=bf16, requires_grad=True)
        v = torch.randn(2, kv_heads, 64, head_dim, device=dev, dtype=bf16, requires_grad=True)
        attend(q, k, v, True, gqa).float().sum().backward()
        with torch.no_grad():  # a decode step against a strided slice of a longer cache
            cache = torch.randn(2, 2, kv_heads, 96, head_dim, device=dev, dtype=bf16)
            q1 = torch.randn(2, heads, 1, head_dim, device=dev, dtype=bf16)
            attend(q1, cache[0][:, :, :64], cache[1][:, :, :64], False, gqa)
    torch.cuda.synchronize()


def probe_attention(arch: dict) -> dict:
    """Tries flash-only then default dispatch, native GQA then expanded; keeps the first that
    runs a causal forward+backward and a decode step. RuntimeError when none does."""
    heads, kv_heads, head_dim = arch["heads"], arch["kv_heads"], arch["head_dim"]
    gqa_modes = ("none",) if heads == kv_heads else ("native", "expanded")
    tried = []
    for backend in ("flash", "default"):
        for gqa in gqa_modes:
            try:
                _try_attention(backend, gqa, heads, kv_heads, head_dim)
            except Exception as e:  # noqa: BLE001 -- any failure means: try the next mode
                tried.append(f"{backend}/{gqa}: {type(e).__name__}: {str(e)[:300]}")
                continue
            ATTENTION.update(backend=backend, gqa=gqa, tried=tried)
            return dict(ATTENTION)
    raise RuntimeError("no scaled_dot_product_attention mode works here: " + " | ".join(tried))


# --- RMSNorm ------------------------------------------------------------------------------------

def rms_norm_eager(x, weight, eps: float):
    """Hugging Face's LlamaRMSNorm arithmetic (fp32 inside), but the weight cast to x's dtype so
    that a bf16 input gives a bf16 output under autocast too."""
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return y.to(x.dtype) * weight.to(x.dtype)


class RMSNormFn(torch.autograd.Function):
    """RMSNorm that keeps only its input and 1/rms for backward, as fused kernels (apex,
    Transformer Engine, Liger) do; autograd on the eager version keeps fp32 intermediates."""

    @staticmethod
    def forward(ctx, x, weight, eps):
        xf = x.float()
        rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        return (xf * rstd).to(x.dtype) * weight.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, rstd = ctx.saved_tensors
        xhat = x.float() * rstd
        g = grad_out.float()
        gw = g * weight.float()
        dx = rstd * (gw - xhat * (gw * xhat).mean(-1, keepdim=True))
        dweight = (g * xhat).reshape(-1, x.shape[-1]).sum(0)
        return dx.to(x.dtype), dweight.to(weight.dtype), None


def check_fused_norm() -> float:
    """Largest difference between RMSNormFn and autograd through rms_norm_eager (outputs and both
    gradients) on small random CPU tensors."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 16, dtype=torch.float64, generator=gen, requires_grad=True)
    w = torch.randn(16, dtype=torch.float64, generator=gen, requires_grad=True)
    gy = torch.randn(2, 3, 16, dtype=torch.float64, generator=gen)
    y1 = RMSNormFn.apply(x, w, 1e-5)
    (y1 * gy).sum().backward()
    gx1, gw1 = x.grad.clone(), w.grad.clone()
    x.grad, w.grad = None, None
    y2 = rms_norm_eager(x, w, 1e-5)
    (y2 * gy).sum().backward()
    return max(float((y1 - y2).abs().max()), float((gx1 - x.grad).abs().max()),
               float((gw1 - w.grad).abs().max()))


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float, fused: bool, device, dtype):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, device=device, dtype=dtype))
        self.eps, self.fused = eps, fused

    def forward(self, x):
        if self.fused and torch.is_grad_enabled() and (x.requires_grad or
                                                       self.weight.requires_grad):
            return RMSNormFn.apply(x, self.weight, self.eps)
        return rms_norm_eager(x, self.weight, self.eps)


# --- the decoder ----------------------------------------------------------------------------------

def rope_tables(positions: int, head_dim: int, theta: float, device):
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32)
                           / head_dim))
    freqs = torch.outer(torch.arange(positions, device=device, dtype=torch.float32), inv)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin):
    """x [b, heads, s, d]; cos and sin [s, d] (rotate-half convention, as Hugging Face)."""
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Attention(nn.Module):
    def __init__(self, arch: dict, fused_norm: bool, device, dtype):
        super().__init__()
        h, d = arch["hidden"], arch["head_dim"]
        self.heads, self.kv_heads, self.head_dim = arch["heads"], arch["kv_heads"], d
        bias = arch["qkv_bias"]
        self.q_proj = nn.Linear(h, self.heads * d, bias=bias, device=device, dtype=dtype)
        self.k_proj = nn.Linear(h, self.kv_heads * d, bias=bias, device=device, dtype=dtype)
        self.v_proj = nn.Linear(h, self.kv_heads * d, bias=bias, device=device, dtype=dtype)
        self.o_proj = nn.Linear(self.heads * d, h, bias=False, device=device, dtype=dtype)
        self.q_norm = self.k_norm = None
        if arch["qk_norm"]:  # Qwen3: RMSNorm over each head before rotary
            self.q_norm = RMSNorm(d, arch["rms_eps"], fused_norm, device, dtype)
            self.k_norm = RMSNorm(d, arch["rms_eps"], fused_norm, device, dtype)

    def forward(self, x, cos, sin, cache=None, pos: int = 0):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        q = apply_rope(q.transpose(1, 2), cos, sin)
        k = apply_rope(k.transpose(1, 2), cos, sin)
        causal = True
        if cache is not None:  # cache [2, batch, kv_heads, max_len, head_dim]
            cache[0][:, :, pos:pos + s].copy_(k)
            cache[1][:, :, pos:pos + s].copy_(v)
            k, v = cache[0][:, :, :pos + s], cache[1][:, :, :pos + s]
            causal = s > 1  # a prefill starts at pos 0; a decode step sees the whole cache
        out = attend(q, k, v, causal)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, self.heads * self.head_dim))


class MLP(nn.Module):
    def __init__(self, arch: dict, device, dtype):
        super().__init__()
        h, i, bias = arch["hidden"], arch["intermediate"], arch["mlp_bias"]
        self.gate_proj = nn.Linear(h, i, bias=bias, device=device, dtype=dtype)
        self.up_proj = nn.Linear(h, i, bias=bias, device=device, dtype=dtype)
        self.down_proj = nn.Linear(i, h, bias=bias, device=device, dtype=dtype)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, arch: dict, fused_norm: bool, device, dtype):
        super().__init__()
        eps = arch["rms_eps"]
        self.input_norm = RMSNorm(arch["hidden"], eps, fused_norm, device, dtype)
        self.attn = Attention(arch, fused_norm, device, dtype)
        self.post_norm = RMSNorm(arch["hidden"], eps, fused_norm, device, dtype)
        self.mlp = MLP(arch, device, dtype)

    def forward(self, x, cos, sin, cache=None, pos: int = 0):
        h = x + self.attn(self.input_norm(x), cos, sin, cache, pos)
        return h + self.mlp(self.post_norm(h))


class Decoder(nn.Module):
    def __init__(self, arch: dict, num_layers: int, positions: int, *, fused_norm: bool,
                 checkpointing: bool, residual_bf16: bool, device="cuda",
                 dtype=torch.float32):
        super().__init__()
        h, vocab = arch["hidden"], arch["vocab"]
        self.vocab, self.checkpointing, self.residual_bf16 = vocab, checkpointing, residual_bf16
        self.embed = nn.Embedding(vocab, h, device=device, dtype=dtype)
        self.layers = nn.ModuleList(DecoderLayer(arch, fused_norm, device, dtype)
                                    for _ in range(num_layers))
        self.norm = RMSNorm(h, arch["rms_eps"], fused_norm, device, dtype)
        self.lm_head = None if arch["tie"] else nn.Linear(h, vocab, bias=False, device=device,
                                                          dtype=dtype)
        cos, sin = rope_tables(positions, arch["head_dim"], arch["rope_theta"], device)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def logits(self, x):
        weight = self.embed.weight if self.lm_head is None else self.lm_head.weight
        return F.linear(x, weight)

    def forward(self, ids, targets):
        """Training: mean next-token cross entropy over the batch (fp32 softmax)."""
        x = self.embed(ids)
        if self.residual_bf16:  # autocast leaves the embedding fp32; vramsim counts 2 bytes
            x = x.to(torch.bfloat16)
        s = ids.shape[1]
        cos, sin = self.cos[:s], self.sin[:s]
        for layer in self.layers:
            if self.checkpointing:
                x = checkpoint(layer, x, cos, sin, use_reentrant=False)
            else:
                x = layer(x, cos, sin)
        logits = self.logits(self.norm(x))
        return F.cross_entropy(logits.float().view(-1, self.vocab), targets.reshape(-1))

    def decode_step(self, ids, cache, pos: int):
        """Inference under no_grad: ids [batch, t] at positions pos..pos+t-1 written into cache
        [layers, 2, batch, kv_heads, max_len, head_dim]; logits of the last position only, as
        vLLM computes them."""
        x = self.embed(ids)
        t = ids.shape[1]
        cos, sin = self.cos[pos:pos + t], self.sin[pos:pos + t]
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, cache[i], pos)
        return self.logits(self.norm(x[:, -1:, :]))
