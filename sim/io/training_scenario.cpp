#include "sim/io/training_scenario.hpp"

#include <fstream>
#include <sstream>

#include "sim/io/located_reader.hpp"
#include "sim/io/toml_reader.hpp"
#include "sim/io/topology_loader.hpp"

namespace vramsim::io {

TrainingScenario load_training_scenario(const std::filesystem::path& file) {
  TomlReader r = TomlReader::from_file(file);
  TrainingScenario s;
  s.file = file.string();
  s.text = read_file_text(file);
  const auto str = [](TomlReader& t, std::string_view p) { return t.optional_string(p); };
  const auto i64 = [](TomlReader& t, std::string_view p) { return t.optional_int64(p); };
  const auto bln = [](TomlReader& t, std::string_view p) { return t.optional_bool(p); };
  for (const char* table : {"model", "hardware", "parallel", "batch", "memory"}) {
    r.optional_table(table);
  }
  r.optional_string("description");
  read_into(r, "model.id", s.model, str);
  read_into(r, "hardware.gpu", s.gpu, str);
  read_into(r, "hardware.num_gpus", s.num_gpus, i64);
  read_into(r, "hardware.gpus_per_node", s.gpus_per_node, i64);
  read_into(r, "hardware.topology", s.topology, str);
  if (s.topology) {  // a file is relative to the scenario file; a node id stays as written
    const std::filesystem::path t(s.topology->value);
    const bool is_file = t.has_parent_path() || t.extension() == ".toml";
    if (is_file && t.is_relative()) s.topology->value = (file.parent_path() / t).string();
  }
  read_into(r, "hardware.calibration", s.calibration, str);
  if (s.calibration && std::filesystem::path(s.calibration->value).is_relative()) {
    s.calibration->value = (file.parent_path() / s.calibration->value).string();
  }
  read_into(r, "parallel.strategy", s.strategy, str);
  read_into(r, "parallel.tp", s.tp, i64);
  read_into(r, "parallel.pp", s.pp, i64);
  read_into(r, "parallel.pp_schedule", s.pp_schedule, str);
  read_into(r, "parallel.pp_interleave", s.pp_interleave, i64);
  read_into(r, "parallel.sequence_parallel", s.sequence_parallel, bln);
  read_into(r, "batch.micro_batch", s.micro_batch, i64);
  read_into(r, "batch.global_batch", s.global_batch, i64);
  read_into(r, "batch.seq_len", s.seq_len, i64);
  read_into(r, "memory.checkpointing", s.checkpointing, str);
  read_into(r, "memory.precision", s.precision, str);
  read_into(r, "memory.optimizer", s.optimizer, str);
  read_into(r, "memory.offload_optimizer", s.offload_optimizer, bln);
  r.finish();
  return s;
}

ClusterTopology load_cluster_topology(const std::string& value,
                                      const std::filesystem::path& topologies_dir,
                                      std::string_view field) {
  const std::filesystem::path file(value);
  ClusterTopology t;
  const bool looks_like_path = file.has_parent_path() || file.extension() == ".toml";
  if (!looks_like_path && !std::filesystem::exists(file)) {
    t.node = find_node(value, topologies_dir, field);
    return t;
  }
  TomlReader r = TomlReader::from_file(file);
  if (r.has("num_gpus") || r.has("fabric")) {
    t.node = load_node_file(file);
    return t;
  }
  r.optional_string("description");
  const std::optional<std::string> node = r.optional_string("node");
  r.optional_table("network");
  t.network_bandwidth = r.optional_bandwidth("network.bandwidth_per_gpu");
  t.network_latency = r.optional_duration("network.latency");
  if (t.network_bandwidth && t.network_bandwidth->bytes_per_second() <= 0) {
    r.error("network.bandwidth_per_gpu", "must be positive");
  }
  if (t.network_latency && *t.network_latency < Duration::zero()) {
    r.error("network.latency", "must not be negative");
  }
  const SourceLocation node_at = r.location("node");
  r.finish();
  if (node) {
    const std::filesystem::path node_file(*node);
    if (node_file.has_parent_path() || node_file.extension() == ".toml") {
      t.node = load_node_file(node_file.is_relative() ? file.parent_path() / node_file : node_file);
    } else {
      try {
        t.node = find_node(*node, topologies_dir, "node");
      } catch (const ConfigError& e) {  // point at the cluster file's line
        ValidationReport report;
        for (const Problem& p : e.report().problems()) {
          report.error("node", p.message, p.where.file.empty() ? node_at : p.where);
        }
        throw ConfigError(report);
      }
    }
  }
  return t;
}

}  // namespace vramsim::io
