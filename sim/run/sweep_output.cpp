#include "sim/run/sweep_output.hpp"

#include <fmt/format.h>

#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "sim/core/check.hpp"
#include "sim/run/serve_results.hpp"
#include "sim/training/op_graph.hpp"

namespace vramsim::run {

namespace {

using io::Quantity;

// NOTE: the numbers of train_json (sim/run/train_results.cpp) as declared quantities. They
// belong with train_json as a typed record, as serve_summary is for serve_json; until that
// record exists they are declared here once, and tests/cli/results_naming_cli_test.cpp checks
// that every number train_json gives is declared (an undeclared one would be left out of the
// summary).
io::FieldSchema device_fields() {
  io::FieldSchema s = {{"pp_stage", Quantity::kCount},
                       {"peak_allocated_bytes", Quantity::kBytes},
                       {"peak_reserved_bytes", Quantity::kBytes},
                       {"model_state_bytes", Quantity::kBytes},
                       {"activation_bytes", Quantity::kBytes},
                       {"non_allocator_bytes", Quantity::kBytes},
                       {"total_memory_bytes", Quantity::kBytes},
                       {"step_time_s", Quantity::kSeconds},
                       {"fits", Quantity::kFlag},
                       {"shortfall_bytes", Quantity::kBytes},
                       {"compute_s", Quantity::kSeconds},
                       {"tp_comm_s", Quantity::kSeconds},
                       {"cp_comm_s", Quantity::kSeconds},
                       {"ep_comm_s", Quantity::kSeconds},
                       {"exposed_comm_s", Quantity::kSeconds},
                       {"bubble_s", Quantity::kSeconds}};
  for (int k = 0; k < training::kNumMemoryCategories; ++k) {
    s.emplace_back(fmt::format("at_peak_{}_bytes",
                               training::to_string(static_cast<training::MemoryCategory>(k))),
                   Quantity::kBytes);
  }
  return s;
}

io::FieldSchema train_fields() {
  io::FieldSchema s = {{"num_gpus", Quantity::kCount},
                       {"gpus_per_node", Quantity::kCount},
                       {"tp", Quantity::kCount},
                       {"pp", Quantity::kCount},
                       {"dp", Quantity::kCount},
                       {"cp", Quantity::kCount},
                       {"ep", Quantity::kCount},
                       {"expert_load_imbalance", Quantity::kRatio},
                       {"moe_capacity_factor", Quantity::kRatio},
                       {"moe_pad_to_capacity", Quantity::kFlag},
                       {"moe_routed_load", Quantity::kRatio},
                       {"moe_busiest_expert_dropped_fraction", Quantity::kRatio},
                       {"pp_interleave", Quantity::kCount},
                       {"sequence_parallel", Quantity::kFlag},
                       {"offload_optimizer", Quantity::kFlag},
                       {"micro_batch", Quantity::kCount},
                       {"global_batch", Quantity::kCount},
                       {"num_micro_batches", Quantity::kCount},
                       {"seq_len", Quantity::kCount},
                       {"tokens_per_s", Quantity::kRate},
                       {"mfu", Quantity::kRatio},
                       {"model_flops_per_step", Quantity::kFlop},
                       // With LoRA / QLoRA, optimizer offload or a paged optimizer only.
                       {"lora_rank", Quantity::kCount},
                       {"lora_alpha", Quantity::kRatio},
                       {"lora_dropout", Quantity::kRatio},
                       {"double_quant", Quantity::kFlag},
                       {"trainable_params", Quantity::kCount},
                       {"all_params", Quantity::kCount},
                       {"trainable_fraction", Quantity::kRatio},
                       {"trainable_params_on_device", Quantity::kCount},
                       {"frozen_weights_bytes", Quantity::kBytes},
                       {"host_memory_bytes_per_gpu", Quantity::kBytes},
                       {"host_memory_bytes_per_node", Quantity::kBytes},
                       {"offload_pcie_s", Quantity::kSeconds},
                       {"nvme_bytes_per_gpu", Quantity::kBytes},
                       {"offload_nvme_s", Quantity::kSeconds},
                       {"offload_cpu_adam_s", Quantity::kSeconds}};
  for (const auto& f : device_fields()) {
    if (f.first != "pp_stage" && !f.first.starts_with("at_peak_")) s.push_back(f);
  }
  return s;
}

SummaryColumn string_column(std::string name, std::size_t rows) {
  SummaryColumn c;
  c.name = std::move(name);
  c.type = io::ColumnType::kString;
  c.strings.assign(rows, "");
  c.present.assign(rows, false);
  return c;
}

/// Whether a result field becomes a summary column, and as which type.
std::optional<io::ColumnType> column_type(const nlohmann::ordered_json& v) {
  if (v.is_boolean() || v.is_number_integer()) return io::ColumnType::kInt64;
  if (v.is_number_float()) return io::ColumnType::kFloat64;
  if (v.is_string()) return io::ColumnType::kString;
  return std::nullopt;  // objects and arrays stay in the point's result_json
}

}  // namespace

std::string result_shape_problem(io::SweepKind kind, const PointRecord& r) {
  if (!r.result.is_object()) return "its result is not a JSON object";
  if (kind == io::SweepKind::kServe && r.status == kStatusInfeasible) {
    if (!r.result.contains("budget") || !r.result["budget"].is_object()) {
      return "a point that does not fit must hold its budget";
    }
    return "";
  }
  const io::FieldSchema& schema = result_schema(kind);
  for (const auto& [key, value] : r.result.items()) {
    const std::optional<Quantity> q = io::quantity_in(schema, key);
    // null: a value the point does not have (a NaN is written as null too).
    if (!q || value.is_null()) continue;
    bool fits = false;
    const char* wanted = "";
    switch (io::column_type_of(*q)) {
      case io::ColumnType::kInt64:
        fits = value.is_number_integer() || value.is_boolean();
        wanted = "an integer";
        break;
      case io::ColumnType::kFloat64:
        fits = value.is_number() || value.is_boolean();
        wanted = "a number";
        break;
      case io::ColumnType::kString:
        fits = value.is_string();
        wanted = "a string";
        break;
    }
    if (!fits) return fmt::format("its \"{}\" must be {}, got {}", key, wanted, value.dump());
  }
  return "";
}

std::vector<SummaryColumn> summary_columns(const io::SweepGrid& grid,
                                           const std::vector<PointRecord>& records) {
  const std::size_t rows = records.size();
  std::vector<SummaryColumn> cols;
  SummaryColumn index;
  index.name = "point_index";
  index.units = std::string(io::kUnitsCount);
  for (const PointRecord& r : records) index.ints.push_back(r.index);
  index.present.assign(rows, true);
  cols.push_back(std::move(index));
  cols.push_back(string_column("status", rows));
  cols.push_back(string_column("reason", rows));
  for (std::size_t row = 0; row < rows; ++row) {
    cols[1].strings[row] = records[row].status;
    cols[2].strings[row] = records[row].reason;
    cols[1].present[row] = cols[2].present[row] = true;
  }
  for (std::size_t a = 0; a < grid.axes.size(); ++a) {
    SummaryColumn c = string_column(grid.axes[a], rows);
    for (std::size_t row = 0; row < rows; ++row) {
      if (a < records[row].axis_values.size()) {
        c.strings[row] = records[row].axis_values[a];
        c.present[row] = true;
      }
    }
    cols.push_back(std::move(c));
  }
  // The results' own fields, in first-seen order. A number's type and units are those its
  // quantity is declared with (serve_summary, train's fields); an undeclared number is left out.
  const io::FieldSchema& schema = result_schema(grid.kind);
  std::vector<std::string> order;
  std::map<std::string, Quantity> types;
  for (const PointRecord& r : records) {
    if (!r.result.is_object()) continue;
    for (const auto& [key, value] : r.result.items()) {
      const std::optional<io::ColumnType> t = column_type(value);
      if (!t) continue;
      const std::optional<Quantity> q =
          *t == io::ColumnType::kString ? Quantity::kText : io::quantity_in(schema, key);
      if (!q) continue;
      if (types.emplace(key, *q).second) order.push_back(key);
    }
  }
  for (const std::string& key : order) {
    SummaryColumn c;
    c.name = key;
    c.type = io::column_type_of(types[key]);
    c.units = std::string(io::units_of(types[key]));
    c.ints.assign(c.type == io::ColumnType::kInt64 ? rows : 0, -1);
    c.doubles.assign(c.type == io::ColumnType::kFloat64 ? rows : 0,
                     std::numeric_limits<double>::quiet_NaN());
    c.strings.assign(c.type == io::ColumnType::kString ? rows : 0, "");
    c.present.assign(rows, false);
    for (std::size_t row = 0; row < rows; ++row) {
      const nlohmann::ordered_json& res = records[row].result;
      if (!res.is_object() || !res.contains(key)) continue;
      const nlohmann::ordered_json& v = res[key];
      if (column_type(v) != c.type &&
          !(c.type == io::ColumnType::kFloat64 && column_type(v) == io::ColumnType::kInt64)) {
        continue;
      }
      c.present[row] = true;
      switch (c.type) {
        case io::ColumnType::kInt64:
          c.ints[row] = v.is_boolean() ? (v.get<bool>() ? 1 : 0) : v.get<std::int64_t>();
          break;
        case io::ColumnType::kFloat64:
          c.doubles[row] = v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>();
          break;
        case io::ColumnType::kString: c.strings[row] = v.get<std::string>(); break;
      }
    }
    cols.push_back(std::move(c));
  }
  return cols;
}

const io::FieldSchema& result_schema(io::SweepKind kind) {
  static const io::FieldSchema kTrain = train_fields();
  switch (kind) {
    case io::SweepKind::kServe: return serve_summary_schema();
    case io::SweepKind::kTrain: return kTrain;
  }
  VRAMSIM_UNREACHABLE("invalid SweepKind");
}

const io::FieldSchema& train_device_schema() {
  static const io::FieldSchema kDevices = device_fields();
  return kDevices;
}

nlohmann::ordered_json summary_json(const std::vector<SummaryColumn>& columns) {
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  const std::size_t rows = columns.empty() ? 0 : columns.front().present.size();
  for (std::size_t row = 0; row < rows; ++row) {
    nlohmann::ordered_json p;
    for (const SummaryColumn& c : columns) {
      if (!c.present[row]) {
        p[c.name] = nullptr;
        continue;
      }
      switch (c.type) {
        case io::ColumnType::kInt64: p[c.name] = c.ints[row]; break;
        case io::ColumnType::kFloat64: p[c.name] = c.doubles[row]; break;
        case io::ColumnType::kString: p[c.name] = c.strings[row]; break;
      }
    }
    points.push_back(std::move(p));
  }
  nlohmann::ordered_json j;
  j["points"] = std::move(points);
  return j;
}

}  // namespace vramsim::run

