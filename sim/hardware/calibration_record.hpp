// The records of a calibration profile: what kernels/ (vramsim-calibrate) measures on a device
// and the simulator reads back (calibration_profile.hpp reads and writes them as JSON).
//
// Plain aggregates, C++17, no project includes: this header is shared by the CUDA side of
// kernels/ and by sim/, and must stay nvcc-safe. Values are plain numbers at this I/O
// boundary, so every name carries its unit (`_s`, `_bytes`, `_per_s`).
//
// Timing convention (every record): the median of the timed repetitions is THE time; min, max
// and the quartiles describe the spread. A record whose correctness check failed is kept (so a
// user sees it) but the simulator does not interpolate over it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vramsim::calibration {

/// The format identifier and version written into every profile.
inline constexpr const char* kProfileFormat = "vramsim-calibration-profile";
inline constexpr int kProfileFormatVersion = 1;

/// Statistics of the timed repetitions of one measurement, in seconds.
struct Timing {
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  double q1_s = 0;  // first quartile
  double q3_s = 0;  // third quartile
  std::int32_t num_repetitions = 0;
};

/// Outcome of the comparison against a CPU reference on random data.
enum class CheckOutcome { kNotChecked, kPassed, kFailed };

/// Who the profile describes and how it was made.
struct DeviceIdentity {
  std::string name;           // cudaDeviceProp::name, "NVIDIA H200"
  std::string model;          // UUID-free model string: name, sm, memory, SMs, clocks
  std::string driver_version;       // "580.65.06" (or the CUDA driver API version)
  std::string cuda_runtime_version;  // "13.0"
  std::string nccl_version;   // "2.27.7"; empty when built without NCCL
  std::string date;           // ISO 8601 UTC, "2025-11-30T12:00:00Z"
  std::string command;        // the exact command line that produced the profile
  std::int32_t num_devices = 1;  // visible GPUs (collectives ran over this many ranks)
};

/// Memory the runtime and libraries take on the device, in bytes. 0 means not measured.
struct MemoryRecord {
  std::int64_t total_bytes = 0;        // cudaMemGetInfo total
  std::int64_t free_bytes = 0;         // cudaMemGetInfo free right after context creation
  std::int64_t cuda_context_bytes = 0;  // used after cudaFree(0), primary context
  std::int64_t cublas_handle_bytes = 0;     // cublasCreate + cublasLtCreate, device side
  std::int64_t cublas_workspace_bytes = 0;  // the workspace the GEMMs were given
  std::int64_t nccl_communicator_bytes = 0;  // one communicator's buffers on this device
  std::int32_t nccl_communicator_ranks = 0;  // ranks of the communicator measured
  std::int64_t allocation_granularity_bytes = 0;  // cuMemGetAllocationGranularity (minimum)
};

enum class CopyKind {
  kDeviceKernel,          // our vectorised copy kernel, device to device
  kDeviceMemcpy,          // cudaMemcpyAsync device to device
  kHostToDevicePinned,
  kHostToDevicePageable,
  kDeviceToHostPinned,
  kDeviceToHostPageable,
};

/// One copy of `bytes`; the traffic is 2 * bytes on the device (read + write) for device
/// copies and `bytes` over PCIe for host copies (the convention of NVIDIA's bandwidthTest).
struct CopyRecord {
  CopyKind kind = CopyKind::kDeviceKernel;
  std::int64_t bytes = 0;
  Timing timing;
  CheckOutcome check = CheckOutcome::kNotChecked;
};

/// C[m x n] = A[m x k] * B[k x n]: m tokens, n output features, k input features of a linear
/// layer on one TP rank. FLOPs = 2 m n k.
struct GemmRecord {
  std::string dtype;  // "bf16", "fp16", "fp8" (inputs; fp32 accumulation)
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::string label;  // where the shape comes from: "meta-llama/Llama-3.1-8B tp2 gate_proj"
  Timing timing;
  CheckOutcome check = CheckOutcome::kNotChecked;
};

/// Paged decode attention: `batch` sequences of `context` tokens each, one query token each.
/// KV bytes read = batch * context * 2 * num_kv_heads * head_dim * bytes per element.
struct DecodeAttentionRecord {
  std::int64_t batch = 0;
  std::int64_t context = 0;
  std::int64_t num_q_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t block_size = 0;  // tokens per KV block
  std::string kv_dtype;         // "bf16"
  Timing timing;
  CheckOutcome check = CheckOutcome::kNotChecked;
};

/// Causal prefill attention over `seq_len` tokens for `batch` sequences. FLOPs =
/// batch * num_q_heads * 4 * head_dim * seq_len * (seq_len + 1) / 2 (QK^T and PV, causal).
struct PrefillAttentionRecord {
  std::int64_t batch = 0;
  std::int64_t seq_len = 0;
  std::int64_t num_q_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
  std::string dtype;           // "bf16"
  std::string implementation;  // "unfused-cublas" (QK^T GEMM, causal softmax, PV GEMM)
  Timing timing;
  CheckOutcome check = CheckOutcome::kNotChecked;
};

enum class CollectiveOp { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kSendRecv };

/// One collective over `num_ranks` ranks; `bytes` is nccl-tests' size S (comm/collective.hpp).
struct CollectiveRecord {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::int32_t num_ranks = 1;
  std::int32_t num_nodes = 1;
  std::int64_t bytes = 0;
  std::string dtype;  // "fp32" (nccl-tests' default float), "bf16"
  Timing timing;
  CheckOutcome check = CheckOutcome::kNotChecked;
};

/// Everything one run of vramsim-calibrate wrote for one device.
struct CalibrationProfile {
  int format_version = kProfileFormatVersion;
  std::string device_id;  // names topologies/devices/<device_id>.toml
  /// True for hand-made or generated profiles (test fixtures): never a measurement.
  bool synthetic = false;
  std::string note;
  DeviceIdentity identity;
  MemoryRecord memory;
  std::vector<CopyRecord> copies;
  std::vector<GemmRecord> gemms;
  std::vector<DecodeAttentionRecord> decode_attention;
  std::vector<PrefillAttentionRecord> prefill_attention;
  std::vector<CollectiveRecord> collectives;
  std::string source_file;  // the file it was read from; not written
};

/// Bytes moved by one copy record (see CopyRecord).
inline double copy_traffic_bytes(const CopyRecord& r) {
  const bool device = r.kind == CopyKind::kDeviceKernel || r.kind == CopyKind::kDeviceMemcpy;
  return (device ? 2.0 : 1.0) * static_cast<double>(r.bytes);
}

/// nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): busbw = algbw * factor, with
/// 2(n-1)/n for all-reduce, (n-1)/n for all-gather and reduce-scatter, 1 for broadcast and
/// send/recv. n >= 1.
inline double bus_bandwidth_factor(CollectiveOp op, int n) {
  const double r = static_cast<double>(n);
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * (r - 1.0) / r;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter: return (r - 1.0) / r;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kSendRecv: return 1.0;
  }
  return 1.0;
}

/// algbw = S / time, in bytes per second (0 for a zero time).
inline double algorithm_bandwidth(std::int64_t bytes, double time_s) {
  return time_s > 0 ? static_cast<double>(bytes) / time_s : 0.0;
}

/// busbw = algbw * bus_bandwidth_factor.
inline double bus_bandwidth(CollectiveOp op, int n, std::int64_t bytes, double time_s) {
  return algorithm_bandwidth(bytes, time_s) * bus_bandwidth_factor(op, n);
}

}  // namespace vramsim::calibration
