// The lm head and cross-entropy loss's bytes under each implementation (--loss), counted by hand
// for a small constructed case: s = 6, b = 2 (T = 12 tokens), V = 1000, D = 64, bf16 (e = 2)
// unless a case says otherwise. activation_memory.hpp, loss_memory, says what each counts.
#include <string>

#include "sim/training/activation_memory.hpp"
#include "sim/training/training_plan.hpp"
#include "tests/catch.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

model::ModelSpec small_model() {
  model::ModelSpec spec;
  spec.vocab_size = 1000;
  spec.embed_dim = 64;
  spec.hidden_size = 64;
  return spec;
}

constexpr ActivationShape kShape{.seq_len = 6, .micro_batch = 2, .element_bytes = 2};

}  // namespace

TEST_CASE("vocab-parallel, the default, keeps the fp32 softmax of all logits",
          "[training][loss]") {
  CHECK(TrainingPlan{}.loss == Loss{LossKind::kVocabParallel, 1});
  const LossMemory m = loss_memory(small_model(), kShape, Loss{});
  CHECK(m.stored == Bytes(4 * 12 * 1000));             // fp32 softmax
  CHECK(m.forward_transient == Bytes(2 * 12 * 1000));  // bf16 logits
  CHECK(m.backward_transient == Bytes(4 * 12 * 1000));
  CHECK(m.forward_traffic == Bytes(96'000));
  CHECK(m.backward_traffic == Bytes(192'000));
}

TEST_CASE("full: the bf16 logits, their fp32 copy, log-softmax kept, two fp32 gradients",
          "[training][loss]") {
  const LossMemory m = loss_memory(small_model(), kShape, Loss{LossKind::kFull, 1});
  CHECK(m.stored == Bytes(48'000));              // log_softmax's fp32 output
  CHECK(m.forward_transient == Bytes(72'000));   // 2 + 4 bytes per logit
  CHECK(m.backward_transient == Bytes(96'000));  // nll_loss's and log_softmax's fp32 gradients
  CHECK(m.forward_traffic == Bytes((2 + 4 + 8) * 12'000));
  CHECK(m.backward_traffic == Bytes((16 + 4 + 2) * 12'000));
  // Forward peak 10 bytes per logit, backward 12: above vocab-parallel's 6 and 8.
  CHECK(m.stored + m.forward_transient == Bytes(10 * 12'000));
  CHECK(m.stored + m.backward_transient == Bytes(12 * 12'000));
}

TEST_CASE("chunked:4 keeps the bf16 logits and upcasts one chunk of b ceil(s/4) tokens",
          "[training][loss]") {
  const LossMemory m = loss_memory(small_model(), kShape, Loss{LossKind::kChunked, 4});
  // h.chunk(4, dim=1) of s = 6: chunks of 2, 2, 2 positions x b = 2: 4 tokens.
  CHECK(m.stored == Bytes(2 * 12 * 1000));
  CHECK(m.forward_transient == Bytes(4 * 4 * 1000));        // one chunk in fp32
  CHECK(m.backward_transient == Bytes((4 + 2) * 4 * 1000));  // its fp32 gradient and cast
  CHECK(m.forward_traffic == Bytes(10 * 12'000));
  CHECK(m.backward_traffic == Bytes(12 * 12'000));
  // One chunk: all tokens at once (the transient is the whole upcast).
  const LossMemory one = loss_memory(small_model(), kShape, Loss{LossKind::kChunked, 1});
  CHECK(one.forward_transient == Bytes(4 * 12 * 1000));
  // More chunks than positions: one position per chunk.
  const LossMemory many = loss_memory(small_model(), kShape, Loss{LossKind::kChunked, 64});
  CHECK(many.forward_transient == Bytes(4 * 2 * 1000));
}

TEST_CASE("fused keeps only the input gradient and one chunk of logits at a time",
          "[training][loss]") {
  // Liger: inc_factor = cdiv(1000, 64) = 16, chunk_size = next_power_of_2(cdiv(12, 16)) = 1.
  const LossMemory m = loss_memory(small_model(), kShape, Loss{LossKind::kFused, 1});
  CHECK(m.stored == Bytes(2 * 12 * 64));  // grad_input [T, D] in bf16
  CHECK(m.forward_transient == Bytes(2 * 1 * 1000));
  CHECK(m.backward_transient == Bytes(0));
  CHECK(m.forward_traffic == Bytes(4 * 12'000));
  CHECK(m.backward_traffic == Bytes(0));
  // Liger's own example (fused_linear_cross_entropy.py): BT = 4096 * 4, V = 32000, H = 4096
  // gives inc_factor 8 and chunk_size 2048.
  model::ModelSpec big;
  big.vocab_size = 32000;
  big.embed_dim = 4096;
  big.hidden_size = 4096;
  const LossMemory l = loss_memory(big, {.seq_len = 4096, .micro_batch = 4, .element_bytes = 2},
                                   Loss{LossKind::kFused, 1});
  CHECK(l.forward_transient == Bytes(2 * 2048 * 32000));
  CHECK(l.stored == Bytes(2 * 4096 * 4 * 4096));
}

TEST_CASE("fp32 compute has no upcast copy, and tensor parallelism splits the vocabulary",
          "[training][loss]") {
  const ActivationShape fp32{.seq_len = 6, .micro_batch = 2, .element_bytes = 4};
  const LossMemory full = loss_memory(small_model(), fp32, Loss{LossKind::kFull, 1});
  CHECK(full.stored == Bytes(48'000));
  CHECK(full.forward_transient == Bytes(48'000));  // the logits only: .float() returns them
  const LossMemory chunked = loss_memory(small_model(), fp32, Loss{LossKind::kChunked, 4});
  CHECK(chunked.stored == Bytes(48'000));
  CHECK(chunked.forward_transient == Bytes(0));
  CHECK(chunked.backward_transient == Bytes(4 * 4 * 1000));
  const ActivationShape tp2{.seq_len = 6, .micro_batch = 2, .tp = 2, .element_bytes = 2};
  const LossMemory split = loss_memory(small_model(), tp2, Loss{LossKind::kFull, 1});
  CHECK(split.stored == Bytes(4 * 12 * 500));
}

TEST_CASE("loss names parse and print back, and bad ones are refused", "[training][loss]") {
  for (const std::string name : {"vocab-parallel", "full", "fused", "chunked:8", "chunked:1"}) {
    CAPTURE(name);
    const auto l = loss_from_string(name);
    REQUIRE(l.has_value());
    CHECK(to_string(*l) == name);
  }
  CHECK(loss_from_string("chunked:8") == Loss{LossKind::kChunked, 8});
  for (const std::string bad : {"chunked:0", "chunked:", "chunked:N", "chunked:-2", "chunked:8x",
                                "chunked:65537", "chunked", "cross-entropy", ""}) {
    CAPTURE(bad);
    CHECK_FALSE(loss_from_string(bad).has_value());
  }
  CHECK(std::string(loss_names()) == "vocab-parallel, full, chunked:N, fused");
}
