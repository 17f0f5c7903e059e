#include "sim/io/calibration_hdf5.hpp"

#include "sim/hardware/calibration_profile.hpp"
#include "sim/io/results_file.hpp"

#include <cstdint>
#include <vector>

namespace vramsim::io {
namespace {

// The timing columns every measurement table shares.
struct TimingColumns {
  std::vector<double> median, min, max, q1, q3;
  std::vector<std::int64_t> repetitions;
  std::vector<std::string> check;

  void add(const calibration::Timing& t, calibration::CheckOutcome c) {
    median.push_back(t.median_s);
    min.push_back(t.min_s);
    max.push_back(t.max_s);
    q1.push_back(t.q1_s);
    q3.push_back(t.q3_s);
    repetitions.push_back(t.num_repetitions);
    check.emplace_back(calibration::to_string(c));
  }
  void append_to(std::vector<Column>& columns) const {
    columns.push_back(Column::float64("median_s", kUnitsSeconds, median));
    columns.push_back(Column::float64("min_s", kUnitsSeconds, min));
    columns.push_back(Column::float64("max_s", kUnitsSeconds, max));
    columns.push_back(Column::float64("q1_s", kUnitsSeconds, q1));
    columns.push_back(Column::float64("q3_s", kUnitsSeconds, q3));
    columns.push_back(Column::int64("num_repetitions", kUnitsCount, repetitions));
    columns.push_back(Column::string("check", check));
  }
};

void write_copies(ResultsWriter& w, const calibration::CalibrationProfile& p) {
  if (p.copies.empty()) return;
  std::vector<std::string> kind;
  std::vector<std::int64_t> bytes;
  TimingColumns t;
  for (const auto& r : p.copies) {
    kind.emplace_back(calibration::to_string(r.kind));
    bytes.push_back(r.bytes);
    t.add(r.timing, r.check);
  }
  std::vector<Column> c{Column::string("kind", kind), Column::int64("bytes", kUnitsBytes, bytes)};
  t.append_to(c);
  w.write_table("/calibration/copies", c);
}

void write_gemms(ResultsWriter& w, const calibration::CalibrationProfile& p) {
  if (p.gemms.empty()) return;
  std::vector<std::string> dtype, label;
  std::vector<std::int64_t> m, n, k;
  TimingColumns t;
  for (const auto& r : p.gemms) {
    dtype.push_back(r.dtype);
    label.push_back(r.label);
    m.push_back(r.m);
    n.push_back(r.n);
    k.push_back(r.k);
    t.add(r.timing, r.check);
  }
  std::vector<Column> c{Column::string("dtype", dtype), Column::int64("m", kUnitsCount, m),
                        Column::int64("n", kUnitsCount, n), Column::int64("k", kUnitsCount, k),
                        Column::string("label", label)};
  t.append_to(c);
  w.write_table("/calibration/gemms", c);
}

void write_attention(ResultsWriter& w, const calibration::CalibrationProfile& p) {
  if (!p.decode_attention.empty()) {
    std::vector<std::int64_t> batch, context, q, kv, dim, block;
    std::vector<std::string> dtype;
    TimingColumns t;
    for (const auto& r : p.decode_attention) {
      batch.push_back(r.batch);
      context.push_back(r.context);
      q.push_back(r.num_q_heads);
      kv.push_back(r.num_kv_heads);
      dim.push_back(r.head_dim);
      block.push_back(r.block_size);
      dtype.push_back(r.kv_dtype);
      t.add(r.timing, r.check);
    }
    std::vector<Column> c{Column::int64("batch", kUnitsCount, batch),
                          Column::int64("context", kUnitsCount, context),
                          Column::int64("num_q_heads", kUnitsCount, q),
                          Column::int64("num_kv_heads", kUnitsCount, kv),
                          Column::int64("head_dim", kUnitsCount, dim),
                          Column::int64("block_size", kUnitsCount, block),
                          Column::string("kv_dtype", dtype)};
    t.append_to(c);
    w.write_table("/calibration/decode_attention", c);
  }
  if (!p.prefill_attention.empty()) {
    std::vector<std::int64_t> batch, seq, q, kv, dim;
    std::vector<std::string> dtype, impl;
    TimingColumns t;
    for (const auto& r : p.prefill_attention) {
      batch.push_back(r.batch);
      seq.push_back(r.seq_len);
      q.push_back(r.num_q_heads);
      kv.push_back(r.num_kv_heads);
      dim.push_back(r.head_dim);
      dtype.push_back(r.dtype);
      impl.push_back(r.implementation);
      t.add(r.timing, r.check);
    }
    std::vector<Column> c{Column::int64("batch", kUnitsCount, batch),
                          Column::int64("seq_len", kUnitsCount, seq),
                          Column::int64("num_q_heads", kUnitsCount, q),
                          Column::int64("num_kv_heads", kUnitsCount, kv),
                          Column::int64("head_dim", kUnitsCount, dim),
                          Column::string("dtype", dtype), Column::string("implementation", impl)};
    t.append_to(c);
    w.write_table("/calibration/prefill_attention", c);
  }
}

void write_collectives(ResultsWriter& w, const calibration::CalibrationProfile& p) {
  if (p.collectives.empty()) return;
  std::vector<std::string> op, dtype;
  std::vector<std::int64_t> ranks, nodes, bytes;
  std::vector<double> algbw, busbw;
  TimingColumns t;
  for (const auto& r : p.collectives) {
    op.emplace_back(calibration::to_string(r.op));
    dtype.push_back(r.dtype);
    ranks.push_back(r.num_ranks);
    nodes.push_back(r.num_nodes);
    bytes.push_back(r.bytes);
    const double alg = r.timing.median_s > 0 ? static_cast<double>(r.bytes) / r.timing.median_s : 0;
    algbw.push_back(alg);
    busbw.push_back(alg * calibration::bus_bandwidth_factor(r.op, r.num_ranks));
    t.add(r.timing, r.check);
  }
  std::vector<Column> c{Column::string("op", op),
                        Column::int64("num_ranks", kUnitsCount, ranks),
                        Column::int64("num_nodes", kUnitsCount, nodes),
                        Column::int64("bytes", kUnitsBytes, bytes), Column::string("dtype", dtype),
                        Column::float64("algbw", "B/s", algbw),
                        Column::float64("busbw", "B/s", busbw)};
  t.append_to(c);
  w.write_table("/calibration/collectives", c);
}

}  // namespace

void write_calibration_hdf5(const calibration::CalibrationProfile& p,
                            const std::filesystem::path& out, const std::string& command_line) {
  ResultsWriter w(out);
  w.write_run_metadata({.vramsim_version = "",
                        .command = command_line,
                        .scenario_text = "",
                        .seed = 0,
                        .inputs = "",
                        .calibration_source = p.source_file,
                        .created_by = "vramsim calibrate-report"});
  const calibration::MemoryRecord& m = p.memory;
  const std::vector<std::int64_t> total{m.total_bytes}, free{m.free_bytes},
      context{m.cuda_context_bytes}, cublas{m.cublas_handle_bytes},
      workspace{m.cublas_workspace_bytes}, nccl{m.nccl_communicator_bytes},
      nccl_ranks{m.nccl_communicator_ranks}, granularity{m.allocation_granularity_bytes};
  w.write_table("/calibration/memory",
                {Column::int64("total_bytes", kUnitsBytes, total),
                 Column::int64("free_bytes", kUnitsBytes, free),
                 Column::int64("cuda_context_bytes", kUnitsBytes, context),
                 Column::int64("cublas_handle_bytes", kUnitsBytes, cublas),
                 Column::int64("cublas_workspace_bytes", kUnitsBytes, workspace),
                 Column::int64("nccl_communicator_bytes", kUnitsBytes, nccl),
                 Column::int64("nccl_communicator_ranks", kUnitsCount, nccl_ranks),
                 Column::int64("allocation_granularity_bytes", kUnitsBytes, granularity)});
  write_copies(w, p);
  write_gemms(w, p);
  write_attention(w, p);
  write_collectives(w, p);
  const calibration::DeviceIdentity& id = p.identity;
  w.set_string_attribute("/calibration", "device_id", p.device_id);
  w.set_int_attribute("/calibration", "synthetic", p.synthetic ? 1 : 0);
  w.set_string_attribute("/calibration", "name", id.name);
  w.set_string_attribute("/calibration", "model", id.model);
  w.set_string_attribute("/calibration", "driver_version", id.driver_version);
  w.set_string_attribute("/calibration", "cuda_runtime_version", id.cuda_runtime_version);
  w.set_string_attribute("/calibration", "nccl_version", id.nccl_version);
  w.set_string_attribute("/calibration", "date", id.date);
  w.set_string_attribute("/calibration", "profile_command", id.command);
  w.set_int_attribute("/calibration", "num_devices", id.num_devices);
  w.finish();
}

}  // namespace vramsim::io
