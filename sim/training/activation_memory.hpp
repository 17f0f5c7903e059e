// Activation memory per transformer layer: the bytes a layer's forward keeps for its backward.
//
// 1. The published formulas of Korthikanti et al. 2022, "Reducing Activation Recomputation in
//    Large Transformer Models" (arXiv:2205.05198), sec. 4 and Table 2, for a GPT layer with
//    s = sequence length, b = micro-batch, h = hidden, a = heads, t = tensor-parallel size,
//    16-bit activations, 1-byte dropout masks, a 4h-wide GeLU MLP:
//      no parallelism                      sbh (34 + 5as/h)
//      tensor parallel                     sbh (10 + 24/t + 5as/(ht))
//      tensor + sequence parallel          sbh (34/t + 5as/(ht))
//      tensor parallel + selective         sbh (10 + 24/t)
//      tensor + sequence parallel + sel.   sbh (34/t)
//      full recompute                      2 sbh          (only the layer input)
//    The 34 = attention 11 (QKV input 2, Q and K 4, V 2, projection input 2, dropout mask 1)
//    + MLP 19 (input 2, GeLU input 8, GeLU output 8, dropout mask 1) + two LayerNorm inputs 4;
//    5as/h = softmax output 2 + its dropout mask 1 + dropout output 2, per s^2 entry per head.
//
// 2. The shape-adapted version the simulator uses (`layer_activations`), for today's
//    decoder layers: RMSNorm, rotary, GQA, a gated (SwiGLU) or plain MLP of width I, no dropout
//    (Llama, Mistral and Qwen train without it), and flash attention, which stores no s x s
//    matrix but the softmax log-sum-exp (fp32, one per head and token). With e bytes per element,
//    q = heads * head_dim, kv = kv_heads * head_dim, widths split by t, and the terms marked
//    [sp] also split by t under sequence parallelism:
//      attention norm input (the residual)           e sb h          [sp]
//      attention norm output (the QKV matmul input)  e sb h          [sp]
//      Q, K, V after rotary (kept by flash attn)     e sb (q + 2kv) / t
//      attention output (o_proj input; flash attn)   e sb q / t
//      softmax log-sum-exp                           4 b s a / t
//      MLP norm input, MLP norm output               2 e sb h        [sp]
//      gated MLP: gate, up, act(gate), act*up        4 e sb I / t    (plain MLP: 2 e sb I / t)
//      eager attention (no flash): softmax probs     e b a s^2 / t   instead of the LSE
//    With dropout (`ActivationShape::dropout`: Megatron-LM's GPT, hidden and attention dropout
//    0.1 by default) the layer also keeps, as the paper counts them:
//      the two residual branches' dropout masks      2 sb h (1 byte) [sp]
//      eager attention: the probabilities' dropout   (e + 1) b a s^2 / t  (its output and mask)
//    so that a GPT layer (LayerNorm, no rotary, GeLU MLP of 4h, e = 2) gives exactly Table 2's
//    34 sbh + 5 a s^2 b, split as the table splits it.
//    Selective recompute (recompute the attention core) drops the LSE (or the s^2 probabilities,
//    their dropout mask and output) and keeps the attention output, which the output projection
//    saves as its input (the paper's 34 sbh/t with SP); full recompute keeps only the attention
//    norm input.
//    NOTE: GQA kernels expand K and V to all heads inside the kernel, not in memory.
//    A mixture-of-experts layer (experts replicated on every rank, no expert parallelism) keeps,
//    in place of the MLP's inner tensors, with k experts per token of inner width I_e and a
//    shared expert of width I_s:
//      router probabilities (fp32)                   4 sb E          [sp]
//      dispatched token copies, expert outputs       2 e sb k h      (all-gathered over TP)
//      gated experts: gate, up, act(gate), act*up    4 e sb (k I_e + I_s) / t
//    MLA (DeepSeek-V2) is counted with its decompressed K and V at the nominal head width.
//
// 3. torchtitan's op-level selective activation checkpointing (`selective-op`: activation_
//    checkpoint mode "selective", selective_ac_option "op"; torchtitan/parallelisms/
//    parallelize_llama.py, _apply_ac_to_transformer_block at commit 9dec370, Dec 2024). The
//    block runs under a checkpoint whose policy saves the outputs of the ops in _save_list
//    (aten.mm, the SDPA flash and efficient kernels, reduce_scatter, abs, max) except every
//    second aten.mm of the block, counted in call order, and recomputes everything else. The
//    checkpoint keeps the block input. torchtitan's Llama block calls its matmuls in the order
//    wq, wk, wv, (SDPA), wo, then w1, w3, w2 (gated; a plain MLP: w1, w2), so it keeps, per
//    token, with e bytes per element and no TP:
//      block input                                   e h
//      1st, 3rd, 5th, ... matmul outputs             e (q + kv + I + h)  (gated: wq wv w1 w2)
//      SDPA's output and log-sum-exp                 e q + 4 a
//    and recomputes wk, wo and w3 (gated) with every memory-bound op in backward.
//    Modelled for dense layers, flash attention and tp = 1, as torchtitan's FSDP runs use it
//    (with TP its row-parallel matmuls' partial outputs and the reduce-scatters' change the
//    list; refused there).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/training/training_plan.hpp"

namespace vramsim::training {

struct KorthikantiShape {
  std::int64_t s = 0;  // sequence length
  std::int64_t b = 0;  // micro-batch
  std::int64_t h = 0;  // hidden size
  std::int64_t a = 0;  // attention heads
  std::int64_t t = 1;  // tensor-parallel size
};

enum class KorthikantiVariant {
  kNoParallelism,
  kTensorParallel,
  kTensorSequenceParallel,
  kTensorParallelSelective,
  kTensorSequenceParallelSelective,
  kFullRecompute,
};

/// Table 2 of Korthikanti et al. 2022 (see the file comment), per layer, rounded to bytes once.
Bytes korthikanti_layer_bytes(const KorthikantiShape& shape, KorthikantiVariant variant);

/// What one micro-batch's pass through one decoder layer needs on one TP rank.
struct LayerActivations {
  Bytes stored_none;       // kept for backward without recompute
  Bytes stored_selective;  // kept with selective recompute
  Bytes stored_full;       // kept with full recompute: the layer input only
  /// Kept under torchtitan's op-level selective AC (see the file comment); 0 for a MoE layer,
  /// which that policy is not modelled for (plan_validation refuses it).
  Bytes stored_selective_op;
  /// Alive at once while the largest block (the MLP) recomputes its forward: what a
  /// recomputed layer re-materializes on top of its stored input.
  Bytes recompute_peak;
  /// Gradient buffers alive inside one layer's backward: the MLP's gate/up gradients and the
  /// input gradient (NOTE: an estimate; autograd frees each as soon as it is consumed).
  Bytes backward_transient;
  /// Each total above as the tensors that make it up, in the order the forward (backward)
  /// creates them, as PyTorch's caching allocator is asked for them: one request per tensor,
  /// not one per layer (their sizes decide which freed blocks a later request can reuse).
  std::vector<Bytes> none_tensors, selective_tensors, full_tensors, selective_op_tensors;
  std::vector<Bytes> recompute_tensors, backward_tensors;
};

/// The tensors of `tensors` split to add up to exactly `total`: the leading ones while they fit,
/// then one tensor of what is left (a total raised by terms the list does not name, such as a
/// LoRA adapter's activations, gets them as one more tensor). Empty for a total of 0.
std::vector<Bytes> split_into_tensors(Bytes total, const std::vector<Bytes>& tensors);

/// `all` less one tensor of equal size per tensor of `removed` (a multiset difference; sizes of
/// `removed` absent from `all` are ignored), in `all`'s order.
std::vector<Bytes> tensors_without(const std::vector<Bytes>& all,
                                   const std::vector<Bytes>& removed);

struct ActivationShape {
  std::int64_t seq_len = 0;
  std::int64_t micro_batch = 1;
  int tp = 1;
  bool sequence_parallel = false;
  bool flash_attention = true;
  std::int64_t element_bytes = 2;
  bool dropout = false;  // dropout masks kept (see the file comment)
  /// MoE layers: the routed token copies this rank's experts hold over the balanced share
  /// (TrainingPlan::moe_routed_load; 1 for uniform routing).
  double routed_load = 1.0;
};

/// The shape-adapted per-layer bytes (see the file comment) of one of `spec`'s decoder layers:
/// its dense MLP, or with `moe_layer` (a model with a MoeSpec only) its mixture of experts.
LayerActivations layer_activations(const model::ModelSpec& spec, const ActivationShape& shape,
                                   bool moe_layer = false);

/// A dense decoder layer's matmuls in the order torchtitan's Llama block calls them: wq, wk,
/// wv, wo, then w1, w3, w2 (gated) or w1, w2 (features before TP). Under `selective-op` the
/// even positions (0-based) keep their outputs, the odd ones are recomputed in backward.
struct SelectiveOpMatmul {
  std::int64_t out_features = 0;
  std::int64_t in_features = 0;
};
std::vector<SelectiveOpMatmul> selective_op_matmuls(const model::ModelSpec& spec);

/// Bytes one layer keeps under `ckpt` for layer index `layer`.
Bytes stored_activation_bytes(const LayerActivations& acts, const Checkpointing& ckpt,
                              std::int64_t layer);
/// The tensors of stored_activation_bytes.
const std::vector<Bytes>& stored_activation_tensors(const LayerActivations& acts,
                                                    const Checkpointing& ckpt, std::int64_t layer);

/// The lm head and cross-entropy loss of one micro-batch on the last stage, as `loss` computes
/// them. T = s b tokens, V' = ceil(V / t) logits per token on this rank, e = the compute element
/// bytes, u = the bytes of logits.float()'s copy (4; 0 when the compute dtype is fp32 and the
/// upcast returns its input):
///   vocab-parallel (Megatron-LM, _VocabParallelCrossEntropy): the fp32 softmax, computed in
///     place on the upcast, kept: 4 T V'; forward: the logits, e T V'; backward: one fp32
///     gradient, 4 T V'.
///   full (transformers ForCausalLMLoss: logits.float(), then F.cross_entropy = log_softmax +
///     nll_loss): autograd keeps log_softmax's fp32 output, 4 T V' (nll_loss saves the same
///     tensor; the upcast saves nothing); forward: the logits (the model's output, alive until
///     the forward returns) and their fp32 copy (alive while the loss runs), (e + u) T V';
///     backward: nll_loss's dense fp32 gradient and log_softmax's, both alive while log_softmax's
///     backward runs, 8 T V' (the cast of the gradient back to e bytes comes after the first is
///     freed: smaller).
///   chunked:N (torchtune CEWithChunkedOutputLoss with TransformerDecoder.chunked_output, its
///     compute_cross_entropy compiled as the recipes run it with compile: True): the output
///     projection of each chunk of c = b ceil(s / N) tokens (h.chunk(N, dim=1)), every chunk's
///     e-byte logits kept for its compiled backward (which recomputes the softmax from them),
///     e T V'; forward: one chunk's fp32 upcast, u c V'; backward: one chunk's fp32 gradient and
///     its cast, (4 + e) c V' (4 c V' where u = 0).
///   fused (Liger Kernel LigerFusedLinearCrossEntropyFunction): logits of one chunk of
///     c = min(T, next_pow2(ceil(T / ceil(V' / D)))) tokens at a time, the gradient written in
///     place and multiplied into grad_input [T, D] in forward; that gradient is what it keeps,
///     e T D; forward: one chunk's logits, e c V'; backward: nothing of its own (a scale).
/// The traffic is what the loss's memory-bound kernels read and write (the matmuls apart: they
/// have the same FLOPs under every implementation).
struct LossMemory {
  Bytes stored;              // kept from the forward to the backward
  Bytes forward_transient;   // alive at the forward's peak only
  Bytes backward_transient;  // alive at the backward's peak only
  /// The three above as tensors (full: the logits, then their fp32 copy; nll_loss's gradient,
  /// then log_softmax's), in the order they are created.
  std::vector<Bytes> stored_tensors, forward_tensors, backward_tensors;
  Bytes forward_traffic;
  Bytes backward_traffic;
};
LossMemory loss_memory(const model::ModelSpec& spec, const ActivationShape& shape,
                       const Loss& loss);

}  // namespace vramsim::training
