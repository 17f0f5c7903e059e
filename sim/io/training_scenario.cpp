#include "sim/io/training_scenario.hpp"

#include <fstream>
#include <sstream>

#include "sim/io/toml_reader.hpp"

namespace vramsim::io {

namespace {

template <class T, class Getter>
void read_into(TomlReader& r, std::string_view path, std::optional<Located<T>>& out,
               Getter get) {
  if (auto v = get(r, path)) out = Located<T>{*v, std::string(path), r.location(path)};
}

}  // namespace

TrainingScenario load_training_scenario(const std::filesystem::path& file) {
  TomlReader r = TomlReader::from_file(file);
  TrainingScenario s;
  s.file = file.string();
  {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    s.text = text.str();
  }
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
  if (s.topology) {  // relative to the scenario file
    const std::filesystem::path t(s.topology->value);
    if (t.is_relative()) s.topology->value = (file.parent_path() / t).string();
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

ClusterTopology load_cluster_topology(const std::filesystem::path& file) {
  TomlReader r = TomlReader::from_file(file);
  ClusterTopology t;
  r.optional_string("description");
  t.node = r.optional_string("node");
  r.optional_table("network");
  t.network_bandwidth = r.optional_bandwidth("network.bandwidth_per_gpu");
  t.network_latency = r.optional_duration("network.latency");
  if (t.network_bandwidth && t.network_bandwidth->bytes_per_second() <= 0) {
    r.error("network.bandwidth_per_gpu", "must be positive");
  }
  r.finish();
  return t;
}

}  // namespace vramsim::io
