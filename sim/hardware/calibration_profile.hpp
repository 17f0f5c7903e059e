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

#include "sim/core/error.hpp"
#include "sim/hardware/calibration_record.hpp"

namespace vramsim::calibration {

std::string_view to_string(CheckOutcome c);   // "not-checked", "passed", "failed"
std::string_view to_string(CopyKind k);       // "device-kernel", "device-memcpy", "h2d-pinned",
                                              // "h2d-pageable", "d2h-pinned", "d2h-pageable"
std::string_view to_string(CollectiveOp op);  // "all-reduce", "all-gather", "reduce-scatter",
                                              // "broadcast", "send-recv"
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
