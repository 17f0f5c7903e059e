// Reading, writing and validating calibration profiles (the JSON file vramsim-calibrate writes,
// records in calibration_record.hpp). One profile describes one device; its `device_id` names
// topologies/devices/<id>.toml.
//
//   {
//     "format": "vramsim-calibration-profile", "format_version": 1,
//     "device_id": "h200", "synthetic": false, "note": "...",
//     "identity": {"name", "model", "driver_version", "cuda_runtime_version", "nccl_version",
//                  "date", "command", "num_devices"},
//     "memory": {"total_bytes", "free_bytes", "cuda_context_bytes", "cublas_handle_bytes",
//                "cublas_workspace_bytes", "nccl_communicator_bytes", "nccl_communicator_ranks",
//                "allocation_granularity_bytes"},
//     "copy":              [{"kind", "bytes", "timing", "check"}],
//     "gemm":              [{"dtype", "m", "n", "k", "label", "timing", "check"}],
//     "decode_attention":  [{"batch", "context", "num_q_heads", "num_kv_heads", "head_dim",
//                            "block_size", "kv_dtype", "timing", "check"}],
//     "prefill_attention": [{"batch", "seq_len", "num_q_heads", "num_kv_heads", "head_dim",
//                            "dtype", "implementation", "timing", "check"}],
//     "collectives":       [{"op", "num_ranks", "num_nodes", "bytes", "dtype", "timing",
//                            "check"}]
//   }
//   "timing": {"median_s", "min_s", "max_s", "q1_s", "q3_s", "num_repetitions"}
//
// The writer adds derived, read-only fields for people and scripts (`bandwidth_bytes_per_s`,
// `flop_rate_per_s`, `algbw_bytes_per_s`, `busbw_bytes_per_s`, `kv_bytes`, `flops`); the reader
// accepts and ignores them. Any other unknown key is an error, as is a missing one: nothing is
// silently defaulted.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/enum_table.hpp"
#include "sim/core/error.hpp"
#include "sim/hardware/calibration_record.hpp"

namespace vramsim::calibration {

// The names of the enums of calibration_record.hpp (kept out of that nvcc-safe header).
inline constexpr auto kCheckOutcomes = enum_table<CheckOutcome>({
    {CheckOutcome::kNotChecked, "not-checked", "no correctness check ran"},
    {CheckOutcome::kPassed, "passed", "the result matched the reference"},
    {CheckOutcome::kFailed, "failed", "the result did not match the reference"},
});
static_assert(covers_every_enumerator(kCheckOutcomes) && names_are_unique(kCheckOutcomes));
inline constexpr auto kCopyKinds = enum_table<CopyKind>({
    {CopyKind::kDeviceKernel, "device-kernel", "vectorised copy kernel, device to device"},
    {CopyKind::kDeviceMemcpy, "device-memcpy", "cudaMemcpyAsync device to device"},
    {CopyKind::kHostToDevicePinned, "h2d-pinned", "host to device from pinned memory"},
    {CopyKind::kHostToDevicePageable, "h2d-pageable", "host to device from pageable memory"},
    {CopyKind::kDeviceToHostPinned, "d2h-pinned", "device to host into pinned memory"},
    {CopyKind::kDeviceToHostPageable, "d2h-pageable", "device to host into pageable memory"},
});
static_assert(covers_every_enumerator(kCopyKinds) && names_are_unique(kCopyKinds));
inline constexpr auto kCollectiveOps = enum_table<CollectiveOp>({
    {CollectiveOp::kAllReduce, "all-reduce", "NCCL all-reduce"},
    {CollectiveOp::kAllGather, "all-gather", "NCCL all-gather"},
    {CollectiveOp::kReduceScatter, "reduce-scatter", "NCCL reduce-scatter"},
    {CollectiveOp::kBroadcast, "broadcast", "NCCL broadcast"},
    {CollectiveOp::kSendRecv, "send-recv", "NCCL send/recv between a pair of ranks"},
});
static_assert(covers_every_enumerator(kCollectiveOps) && names_are_unique(kCollectiveOps));

std::string_view to_string(CheckOutcome c);
std::string_view to_string(CopyKind k);
std::string_view to_string(CollectiveOp op);
std::optional<CheckOutcome> check_outcome_from_string(std::string_view s);
std::optional<CopyKind> copy_kind_from_string(std::string_view s);
std::optional<CollectiveOp> collective_op_from_string(std::string_view s);

/// The profile as JSON (the format above, derived fields included).
nlohmann::json to_json(const CalibrationProfile& profile);

/// Reads a profile from parsed JSON. Every problem (missing or unknown key, wrong type, value
/// out of range) is collected into `report` with its field path ("gemm[3].timing.median_s")
/// and `source_file`; the returned profile is only meaningful when the report stayed ok.
CalibrationProfile profile_from_json(const nlohmann::json& json, const std::string& source_file,
                                     ValidationReport& report);

/// Loads and validates a profile file. Throws ConfigError naming the file and every bad field
/// (also for a file that does not exist or is not JSON).
CalibrationProfile load_calibration_profile(const std::filesystem::path& path);

/// Writes `profile` as indented JSON. Throws std::runtime_error when the file cannot be written.
void save_calibration_profile(const CalibrationProfile& profile,
                              const std::filesystem::path& path);

/// Semantic checks of a profile built in memory (the same value checks the reader applies).
void validate(const CalibrationProfile& profile, ValidationReport& report);

}  // namespace vramsim::calibration
