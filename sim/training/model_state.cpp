#include "sim/training/model_state.hpp"

#include "sim/core/check.hpp"

namespace vramsim::training {

namespace {

// Bytes of one optimizer state element: fp32 where the weights it updates are fp32 (the master
// copy of mixed precision, or fp32 training), the parameter dtype otherwise.
std::int64_t state_element_bytes(Precision p) {
  switch (p) {
    case Precision::kBf16Mixed:
    case Precision::kFp16Mixed:
    case Precision::kFp32:
    case Precision::kBf16Amp:
      return 4;
    case Precision::kBf16:
      return 2;
  }
  VRAMSIM_UNREACHABLE("invalid Precision");
}

}  // namespace

BytesPerParam bytes_per_param(Precision p, Optimizer o) {
  BytesPerParam b;
  b.params = param_element_bytes(p);
  b.grads = param_element_bytes(p);
  switch (p) {
    case Precision::kBf16Mixed:
    case Precision::kFp16Mixed:
      b.master = 4;
      break;
    case Precision::kBf16:
    case Precision::kFp32:
    case Precision::kBf16Amp:  // the fp32 parameters are the master copy
      b.master = 0;
      break;
  }
  switch (o) {
    case Optimizer::kAdamW:
    case Optimizer::kAdam:
      b.optimizer = 2 * state_element_bytes(p);
      break;
    case Optimizer::kSgd:
      b.optimizer = state_element_bytes(p);
      break;
    case Optimizer::kAdam8bit:
      b.optimizer = 2;
      break;
  }
  return b;
}

ShardedParts sharded_parts(Strategy s) {
  switch (s) {
    case Strategy::kDdp:
    case Strategy::kFsdpNoShard:
      return {false, false, false};
    case Strategy::kZero1:
      return {false, false, true};
    case Strategy::kZero2:
      return {false, true, true};
    case Strategy::kZero3:
    case Strategy::kFsdpFull:
    case Strategy::kFsdpGradOp:
    case Strategy::kHsdp:
      return {true, true, true};
  }
  VRAMSIM_UNREACHABLE("invalid Strategy");
}

ModelState model_state_bytes(std::int64_t num_params, Strategy s, Precision p, Optimizer o,
                             int shard_degree, bool offload_optimizer, std::int64_t grad_bytes) {
  VRAMSIM_CHECK(num_params >= 0 && shard_degree >= 1 && grad_bytes >= 0,
                "bad model-state arguments {} / {} / {}", num_params, shard_degree, grad_bytes);
  BytesPerParam per = bytes_per_param(p, o);
  if (grad_bytes > 0) per.grads = grad_bytes;
  const ShardedParts parts = sharded_parts(s);
  const std::int64_t shard = ceil_div(num_params, shard_degree);
  const auto elems = [&](bool sharded) { return sharded ? shard : num_params; };
  ModelState m;
  m.params = Bytes(elems(parts.params) * per.params);
  // ZeRO-Offload (Ren et al. 2021, arXiv:2101.06840, sec. 4.1) moves the gradient partitions
  // to the host with the optimizer, and accumulates there across micro-batches; DDP and NO_SHARD
  // keep their .grad on the device.
  const bool grads_to_host = offload_optimizer && parts.optimizer;
  m.grads = grads_to_host ? Bytes(0) : Bytes(elems(parts.grads) * per.grads);
  if (!offload_optimizer) {
    m.master = Bytes(elems(parts.optimizer) * per.master);
    m.optimizer = Bytes(elems(parts.optimizer) * per.optimizer);
  }
  return m;
}

}  // namespace vramsim::training
