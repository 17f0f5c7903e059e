#include "sim/hardware/calibration_profile.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace vramsim::calibration {

namespace {

using nlohmann::json;

json timing_json(const Timing& t) {
  return json{{"median_s", t.median_s}, {"min_s", t.min_s},   {"max_s", t.max_s},
              {"q1_s", t.q1_s},         {"q3_s", t.q3_s},     {"num_repetitions", t.num_repetitions}};
}

double kv_bytes(const DecodeAttentionRecord& r) {
  const double element = r.kv_dtype == "fp8" ? 1.0 : r.kv_dtype == "fp32" ? 4.0 : 2.0;
  return static_cast<double>(r.batch) * static_cast<double>(r.context) * 2.0 *
         static_cast<double>(r.num_kv_heads) * static_cast<double>(r.head_dim) * element;
}

double prefill_flops(const PrefillAttentionRecord& r) {
  const auto s = static_cast<double>(r.seq_len);
  return static_cast<double>(r.batch) * static_cast<double>(r.num_q_heads) * 4.0 *
         static_cast<double>(r.head_dim) * s * (s + 1.0) / 2.0;
}

double per_second(double amount, const Timing& t) {
  return t.median_s > 0 ? amount / t.median_s : 0.0;
}

}  // namespace

std::string_view to_string(CheckOutcome c) { return name_of(kCheckOutcomes, c); }
std::string_view to_string(CopyKind k) { return name_of(kCopyKinds, k); }
std::string_view to_string(CollectiveOp op) { return name_of(kCollectiveOps, op); }
std::optional<CheckOutcome> check_outcome_from_string(std::string_view s) {
  return parse_name(kCheckOutcomes, s);
}
std::optional<CopyKind> copy_kind_from_string(std::string_view s) {
  return parse_name(kCopyKinds, s);
}
std::optional<CollectiveOp> collective_op_from_string(std::string_view s) {
  return parse_name(kCollectiveOps, s);
}


json to_json(const CalibrationProfile& p) {
  json out;
  out["format"] = kProfileFormat;
  out["format_version"] = p.format_version;
  out["device_id"] = p.device_id;
  out["synthetic"] = p.synthetic;
  out["note"] = p.note;
  const DeviceIdentity& id = p.identity;
  out["identity"] = json{{"name", id.name},
                         {"model", id.model},
                         {"driver_version", id.driver_version},
                         {"cuda_runtime_version", id.cuda_runtime_version},
                         {"nccl_version", id.nccl_version},
                         {"date", id.date},
                         {"command", id.command},
                         {"num_devices", id.num_devices}};
  const MemoryRecord& m = p.memory;
  out["memory"] = json{{"total_bytes", m.total_bytes},
                       {"free_bytes", m.free_bytes},
                       {"cuda_context_bytes", m.cuda_context_bytes},
                       {"cublas_handle_bytes", m.cublas_handle_bytes},
                       {"cublas_workspace_bytes", m.cublas_workspace_bytes},
                       {"nccl_communicator_bytes", m.nccl_communicator_bytes},
                       {"nccl_communicator_ranks", m.nccl_communicator_ranks},
                       {"allocation_granularity_bytes", m.allocation_granularity_bytes}};
  json copies = json::array();
  for (const CopyRecord& r : p.copies) {
    copies.push_back(json{{"kind", to_string(r.kind)},
                          {"bytes", r.bytes},
                          {"timing", timing_json(r.timing)},
                          {"check", to_string(r.check)},
                          {"bandwidth_bytes_per_s", per_second(copy_traffic_bytes(r), r.timing)}});
  }
  out["copy"] = std::move(copies);
  json gemms = json::array();
  for (const GemmRecord& r : p.gemms) {
    const double flops = 2.0 * static_cast<double>(r.m) * static_cast<double>(r.n) *
                         static_cast<double>(r.k);
    gemms.push_back(json{{"dtype", r.dtype},
                         {"m", r.m},
                         {"n", r.n},
                         {"k", r.k},
                         {"label", r.label},
                         {"timing", timing_json(r.timing)},
                         {"check", to_string(r.check)},
                         {"flops", flops},
                         {"flop_rate_per_s", per_second(flops, r.timing)}});
  }
  out["gemm"] = std::move(gemms);
  json decode = json::array();
  for (const DecodeAttentionRecord& r : p.decode_attention) {
    decode.push_back(json{{"batch", r.batch},
                          {"context", r.context},
                          {"num_q_heads", r.num_q_heads},
                          {"num_kv_heads", r.num_kv_heads},
                          {"head_dim", r.head_dim},
                          {"block_size", r.block_size},
                          {"kv_dtype", r.kv_dtype},
                          {"timing", timing_json(r.timing)},
                          {"check", to_string(r.check)},
                          {"kv_bytes", kv_bytes(r)},
                          {"bandwidth_bytes_per_s", per_second(kv_bytes(r), r.timing)}});
  }
  out["decode_attention"] = std::move(decode);
  json prefill = json::array();
  for (const PrefillAttentionRecord& r : p.prefill_attention) {
    prefill.push_back(json{{"batch", r.batch},
                           {"seq_len", r.seq_len},
                           {"num_q_heads", r.num_q_heads},
                           {"num_kv_heads", r.num_kv_heads},
                           {"head_dim", r.head_dim},
                           {"dtype", r.dtype},
                           {"implementation", r.implementation},
                           {"timing", timing_json(r.timing)},
                           {"check", to_string(r.check)},
                           {"flops", prefill_flops(r)},
                           {"flop_rate_per_s", per_second(prefill_flops(r), r.timing)}});
  }
  out["prefill_attention"] = std::move(prefill);
  json colls = json::array();
  for (const CollectiveRecord& r : p.collectives) {
    colls.push_back(json{{"op", to_string(r.op)},
                         {"num_ranks", r.num_ranks},
                         {"num_nodes", r.num_nodes},
                         {"bytes", r.bytes},
                         {"dtype", r.dtype},
                         {"timing", timing_json(r.timing)},
                         {"check", to_string(r.check)},
                         {"algbw_bytes_per_s", algorithm_bandwidth(r.bytes, r.timing.median_s)},
                         {"busbw_bytes_per_s",
                          bus_bandwidth(r.op, r.num_ranks, r.bytes, r.timing.median_s)}});
  }
  out["collectives"] = std::move(colls);
  return out;
}

CalibrationProfile load_calibration_profile(const std::filesystem::path& path) {
  const std::string file = path.string();
  // NOTE: an ifstream opens a folder on Linux and its first read throws std::ios_base::failure,
  // so a folder is refused here, before anything is read.
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(st)) {
    throw ConfigError("calibration",
                      "is a folder, not a profile file; name the profile's .json file in it",
                      {file, 0});
  }
  std::ifstream in(path);
  if (!in) throw ConfigError("calibration", "cannot open profile file", {file, 0});
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    throw ConfigError("calibration", fmt::format("not valid JSON: {}", e.what()), {file, 0});
  } catch (const std::exception& e) {  // a read error of the stream itself
    throw ConfigError("calibration", fmt::format("cannot read the profile: {}", e.what()),
                      {file, 0});
  }
  ValidationReport report;
  CalibrationProfile p = profile_from_json(j, file, report);
  throw_if_errors(report);
  return p;
}

void save_calibration_profile(const CalibrationProfile& profile,
                              const std::filesystem::path& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
  out << to_json(profile).dump(2) << '\n';
  if (!out) throw std::runtime_error(fmt::format("error writing {}", path.string()));
}

}  // namespace vramsim::calibration
