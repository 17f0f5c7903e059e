#include "sim/training/op_graph.hpp"

#include <fmt/format.h>

#include "sim/core/check.hpp"

namespace vramsim::training {

std::string_view to_string(Stream s) { return name_of(kStreams, s); }
std::string_view to_string(MemoryCategory c) { return name_of(kMemoryCategories, c); }
std::string_view to_string(OpKind k) { return name_of(kOpKinds, k); }

bool is_data_parallel_comm(OpKind k) {
  switch (k) {
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
    case OpKind::kAllReduce:
    case OpKind::kOffload:
    case OpKind::kParamGather:
      return true;
    case OpKind::kSetup:
    case OpKind::kForward:
    case OpKind::kRecompute:
    case OpKind::kBackward:
    case OpKind::kTpComm:
    case OpKind::kCpComm:
    case OpKind::kEpComm:
    case OpKind::kSend:
    case OpKind::kGradSync:
    case OpKind::kOptimizer:
      return false;
  }
  VRAMSIM_UNREACHABLE("invalid OpKind");
}

std::string op_name(const Op& op) {
  std::string name(to_string(op.kind));
  if (op.block >= 0) {
    name += op.layer >= 0 ? fmt::format(" L{}", op.layer) : fmt::format(" B{}", op.block);
  }
  if (op.kind == OpKind::kTpComm || op.kind == OpKind::kCpComm || op.kind == OpKind::kEpComm ||
      op.kind == OpKind::kAllGather || op.kind == OpKind::kSend) {
    name += op.backward_pass ? " bwd" : " fwd";
  }
  if (op.micro_batch >= 0) name += fmt::format(" mb{}", op.micro_batch);
  return name;
}

std::int32_t OpGraph::add_buffer(std::int32_t device, MemoryCategory c, Bytes size) {
  VRAMSIM_CHECK(size >= Bytes(0), "negative buffer");
  buffers.push_back({device, c, size});
  return static_cast<std::int32_t>(buffers.size() - 1);
}

std::int32_t OpGraph::add_op(Op op) {
  ops.push_back(std::move(op));
  return static_cast<std::int32_t>(ops.size() - 1);
}

}  // namespace vramsim::training
