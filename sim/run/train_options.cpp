#include "sim/run/train_options.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/io/located_reader.hpp"
#include "sim/io/toml_reader.hpp"

namespace vramsim::run {

namespace {

using training::TrainingPlan;

std::string_view checkpointing_names() { return "none, full, selective, every:K"; }

template <auto M>
std::optional<std::string> set_string(TrainOptions& o, const RawValue& v) {
  o.*M = std::get<std::string>(v);
  return std::nullopt;
}
template <auto M>
std::optional<std::string> set_int(TrainOptions& o, const RawValue& v) {
  o.*M = std::get<std::int64_t>(v);
  return std::nullopt;
}
template <auto M>
std::optional<std::string> set_bool(TrainOptions& o, const RawValue& v) {
  o.*M = std::get<bool>(v);
  return std::nullopt;
}
/// An enum setting: its name through `parse`, else the problem listing `names`.
template <auto M, auto parse, auto names>
std::optional<std::string> set_enum(TrainOptions& o, const RawValue& v) {
  const std::string& text = std::get<std::string>(v);
  if (auto e = parse(text)) {
    o.*M = *e;
    return std::nullopt;
  }
  return fmt::format("unknown value '{}'; valid: {}", text, names());
}
/// A byte size with its unit, > 0.
template <auto M>
std::optional<std::string> set_bytes(TrainOptions& o, const RawValue& v) {
  const std::string& text = std::get<std::string>(v);
  try {
    const Bytes b = parse_bytes(text);
    if (b <= Bytes(0)) return fmt::format("must be > 0, got '{}'", text);
    o.*M = b;
    return std::nullopt;
  } catch (const std::exception& e) {
    return e.what();
  }
}
/// The size in the largest binary unit that holds it exactly ("25MiB", "1536KiB", "7B").
template <auto M>
RawValue get_bytes(const TrainOptions& o) {
  const std::int64_t n = (o.*M).count();
  for (const auto& [unit, size] : {std::pair{"GiB", std::int64_t{1} << 30},
                                   std::pair{"MiB", std::int64_t{1} << 20},
                                   std::pair{"KiB", std::int64_t{1} << 10}}) {
    if (n != 0 && n % size == 0) return RawValue(fmt::format("{}{}", n / size, unit));
  }
  return RawValue(fmt::format("{}B", n));
}
template <auto M>
RawValue get_plain(const TrainOptions& o) {
  return RawValue(o.*M);
}
template <auto M>
RawValue get_enum(const TrainOptions& o) {
  return RawValue(std::string(training::to_string(o.*M)));
}

using O = TrainOptions;
using K = ValueKind;
using P = PathRule;
constexpr std::string_view kPlanDefault = "TrainingPlan (sim/training/training_plan.hpp)";

// The schema. Defaults are TrainOptions' initial values (those of TrainingPlan); `get` reads
// them back, so they are written once.
constexpr TrainOptionRow kRows[] = {
    {"model.id", "--model", K::kString, "", "required",
     "Zoo model id (Hugging Face, case-insensitive) or config.json path", P::kNone, nullptr,
     set_string<&O::model>, get_plain<&O::model>},
    {"hardware.gpu", "--gpu", K::kString, "", "required",
     "Device id from topologies/devices (see `vramsim list gpus`)", P::kNone, nullptr,
     set_string<&O::gpu>, get_plain<&O::gpu>},
    {"hardware.num_gpus", "--num-gpus", K::kInt, "GPUs", kPlanDefault,
     "GPUs in the job (tp x pp x dp)", P::kNone, nullptr, set_int<&O::num_gpus>,
     get_plain<&O::num_gpus>},
    {"hardware.gpus_per_node", "--gpus-per-node", K::kInt, "GPUs",
     "the topology's node, else min(num_gpus, 8) (one node up to 8 GPUs)",
     "GPUs per node (default: the device's node, 8)", P::kNone, nullptr,
     set_int<&O::gpus_per_node>, get_plain<&O::gpus_per_node>},
    {"hardware.topology", "--topology", K::kString, "", "none: the device's default links",
     "Node id of topologies/nodes, a node file, or a cluster file (node + inter-node network)",
     P::kFileOrId, nullptr, set_string<&O::topology>, get_plain<&O::topology>},
    {"hardware.calibration", "--calibration", K::kString, "", "none: the datasheet roofline",
     "Calibration profile (JSON from vramsim-calibrate) for this GPU: measured GEMM, attention "
     "and copy times replace the datasheet roofline where they cover the shapes",
     P::kFile, nullptr, set_string<&O::calibration>, get_plain<&O::calibration>},
    {"parallel.strategy", "--strategy", K::kString, "", kPlanDefault,
     "Data-parallel sharding", P::kNone,
     training::strategy_names,
     set_enum<&O::strategy, training::strategy_from_string, training::strategy_names>,
     get_enum<&O::strategy>},
    {"parallel.tp", "--tp", K::kInt, "", kPlanDefault, "Tensor-parallel degree (Megatron)",
     P::kNone, nullptr, set_int<&O::tp>, get_plain<&O::tp>},
    {"parallel.pp", "--pp", K::kInt, "", kPlanDefault, "Pipeline-parallel degree", P::kNone,
     nullptr, set_int<&O::pp>, get_plain<&O::pp>},
    {"parallel.pp_schedule", "--pp-schedule", K::kString, "", kPlanDefault,
     "Pipeline schedule", P::kNone, training::pipeline_schedule_names,
     set_enum<&O::pp_schedule, training::pipeline_schedule_from_string,
              training::pipeline_schedule_names>,
     get_enum<&O::pp_schedule>},
    {"parallel.pp_interleave", "--pp-interleave", K::kInt, "chunks", kPlanDefault,
     "Model chunks per device (interleaved schedule)", P::kNone, nullptr,
     set_int<&O::pp_interleave>, get_plain<&O::pp_interleave>},
    {"parallel.sequence_parallel", "--sequence-parallel", K::kBool, "", kPlanDefault,
     "Megatron sequence parallelism (needs --tp)", P::kNone, nullptr,
     set_bool<&O::sequence_parallel>, get_plain<&O::sequence_parallel>},
    {"batch.micro_batch", "--micro-batch", K::kInt, "sequences", kPlanDefault,
     "Sequences per micro-batch per DP rank", P::kNone, nullptr, set_int<&O::micro_batch>,
     get_plain<&O::micro_batch>},
    {"batch.global_batch", "--global-batch", K::kInt, "sequences", "0: micro_batch x dp",
     "Sequences per step (default micro-batch x dp)", P::kNone, nullptr,
     set_int<&O::global_batch>, get_plain<&O::global_batch>},
    {"batch.seq_len", "--seq-len", K::kInt, "tokens", kPlanDefault, "Tokens per sequence",
     P::kNone, nullptr, set_int<&O::seq_len>, get_plain<&O::seq_len>},
    {"memory.checkpointing", "--checkpointing", K::kString, "", kPlanDefault,
     "Activation checkpointing", P::kNone, checkpointing_names,
     set_enum<&O::checkpointing, training::checkpointing_from_string, checkpointing_names>,
     get_enum<&O::checkpointing>},
    {"memory.precision", "--precision", K::kString, "", kPlanDefault,
     "Compute and state precision", P::kNone, training::precision_names,
     set_enum<&O::precision, training::precision_from_string, training::precision_names>,
     get_enum<&O::precision>},
    {"memory.optimizer", "--optimizer", K::kString, "", kPlanDefault, "Optimizer", P::kNone,
     training::optimizer_names,
     set_enum<&O::optimizer, training::optimizer_from_string, training::optimizer_names>,
     get_enum<&O::optimizer>},
    {"memory.offload_optimizer", "--offload-optimizer", K::kBool, "", kPlanDefault,
     "Optimizer state and step on the host", P::kNone, nullptr, set_bool<&O::offload_optimizer>,
     get_plain<&O::offload_optimizer>},
    {"parallel.ddp_bucket_cap", "--ddp-bucket-cap", K::kBytes, "bytes", kPlanDefault,
     "Gradient bucket of the bucketed all-reduce (ddp, fsdp-no-shard, zero1), with its unit "
     "(PyTorch DDP's bucket_cap_mb, which is MiB)",
     P::kNone, nullptr, set_bytes<&O::ddp_bucket_cap>, get_bytes<&O::ddp_bucket_cap>},
};

/// `value` relative to `base_dir` under `rule`.
std::string relative_to(const std::string& value, PathRule rule,
                        const std::filesystem::path& base_dir) {
  const std::filesystem::path p(value);
  switch (rule) {
    case PathRule::kNone: return value;
    case PathRule::kFileOrId:
      if (!p.has_parent_path() && p.extension() != ".toml") return value;  // an id
      break;
    case PathRule::kFile: break;
  }
  return p.is_relative() ? (base_dir / p).string() : value;
}

TrainScenario read_scenario(io::TomlReader r, std::string text,
                            const std::filesystem::path& base_dir) {
  TrainScenario s;
  s.file = r.source_name();
  s.text = std::move(text);
  std::vector<std::string> tables;
  for (const TrainOptionRow& row : kRows) {
    std::string table(row.path.substr(0, row.path.find('.')));
    if (std::find(tables.begin(), tables.end(), table) == tables.end()) {
      r.optional_table(table);
      tables.push_back(std::move(table));
    }
  }
  r.optional_string("description");
  for (const TrainOptionRow& row : kRows) {
    std::optional<RawValue> v;
    switch (row.kind) {
      case ValueKind::kString:
        if (auto x = r.optional_string(row.path)) {
          v = relative_to(*x, row.path_rule, base_dir);
        }
        break;
      case ValueKind::kBytes:
        if (auto x = r.optional_string(row.path)) v = *x;
        break;
      case ValueKind::kInt:
        if (auto x = r.optional_int64(row.path)) v = *x;
        break;
      case ValueKind::kBool:
        if (auto x = r.optional_bool(row.path)) v = *x;
        break;
    }
    if (v) {
      s.values.emplace(std::string(row.path),
                       GivenValue{*v, {OriginKind::kScenario, r.location(row.path), ""}});
    }
  }
  r.finish();
  return s;
}

std::string_view origin_text(OriginKind k) {
  switch (k) {
    case OriginKind::kDefault: return "default";
    case OriginKind::kScenario: return "scenario";
    case OriginKind::kFlag: return "flag";
  }
  return "default";
}

}  // namespace

Origin TrainOptions::origin(std::string_view path) const {
  const auto it = origins.find(path);
  return it == origins.end() ? Origin{} : it->second;
}

std::span<const TrainOptionRow> train_option_rows() { return kRows; }

std::string help_text(const TrainOptionRow& row) {
  std::string out(row.help);
  if (row.names != nullptr) out += fmt::format(": {}", row.names());
  if (row.default_source == kPlanDefault && row.kind != ValueKind::kBool) {  // a flag: off
    std::visit([&](const auto& v) { out += fmt::format(" (default: {})", v); },
               row.get(TrainOptions{}));
  }
  return out;
}

const TrainOptionRow* find_train_option(std::string_view path_or_flag) {
  for (const TrainOptionRow& row : kRows) {
    if (row.path == path_or_flag || row.flag == path_or_flag) return &row;
  }
  return nullptr;
}

TrainScenario load_train_scenario(const std::filesystem::path& file) {
  io::TomlReader r = io::TomlReader::from_file(file);
  return read_scenario(std::move(r), io::read_file_text(file), file.parent_path());
}

TrainScenario load_train_scenario_text(std::string_view text, std::string name,
                                       const std::filesystem::path& base_dir) {
  return read_scenario(io::TomlReader::from_string(text, std::move(name)), std::string(text),
                       base_dir);
}

TrainOptions resolve_train_options(const TrainScenario& scenario, const GivenValues& flags) {
  TrainOptions o;
  o.scenario_file = scenario.file;
  o.scenario_text = scenario.text;
  ValidationReport report;
  for (const TrainOptionRow& row : kRows) {
    auto given = flags.find(row.path);
    if (given == flags.end()) given = scenario.values.find(row.path);
    if (given == scenario.values.end()) continue;
    o.origins[std::string(row.path)] = given->second.origin;
    if (auto problem = row.set(o, given->second.value)) {
      report.error(std::string(row.path), *problem, given->second.origin.where);
    }
  }
  if (o.model.empty()) {
    report.error("model.id", "required: a zoo id or a config.json path (or model.id)");
  }
  if (o.gpu.empty()) {
    report.error("hardware.gpu",
                 "required: a device id, see `vramsim list gpus` (or hardware.gpu)");
  }
  throw_if_errors(report);
  return o;
}

Problem problem_at(const TrainOptions& o, std::string_view path, std::string message) {
  const Origin at = o.origin(path);
  return {std::string(path), std::move(message),
          at.kind == OriginKind::kScenario ? at.where : SourceLocation{}};
}

ValidationReport located(const TrainOptions& o, const ValidationReport& report) {
  ValidationReport out;
  for (const Problem& p : report.problems()) {
    if (p.where.file.empty() && find_train_option(p.field) != nullptr &&
        find_train_option(p.field)->path == p.field) {
      const Problem q = problem_at(o, p.field, p.message);
      out.error(q.field, q.message, q.where);
    } else {
      out.error(p.field, p.message, p.where);
    }
  }
  return out;
}

io::ScenarioFields training_scenario_fields() {
  io::ScenarioFields f;
  for (const TrainOptionRow& row : kRows) {
    f.fields.emplace_back(row.path);
    if (row.path_rule != PathRule::kNone) f.path_fields.emplace_back(row.path);
  }
  return f;
}

nlohmann::ordered_json resolved_inputs_json(const TrainOptions& o) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const TrainOptionRow& row : kRows) {
    nlohmann::ordered_json entry;
    std::visit([&](const auto& v) { entry["value"] = v; }, row.get(o));
    const Origin at = o.origin(row.path);
    entry["origin"] = origin_text(at.kind);
    switch (at.kind) {
      case OriginKind::kDefault: entry["source"] = row.default_source; break;
      case OriginKind::kScenario:
        entry["source"] = fmt::format("{}:{}", at.where.file, at.where.line);
        break;
      case OriginKind::kFlag: entry["source"] = at.flag; break;
    }
    j[std::string(row.path)] = entry;
  }
  return j;
}

}  // namespace vramsim::run
