#include "sim/io/training_scenario.hpp"

#include "sim/core/error.hpp"
#include "sim/io/toml_reader.hpp"
#include "sim/io/topology_loader.hpp"

namespace vramsim::io {

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
  check_link_figures(r, "network.bandwidth_per_gpu", t.network_bandwidth, "network.latency",
                     t.network_latency);
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

ClusterTopology cluster_topology_for_device(const std::string& value,
                                            const hardware::DeviceSpec& device,
                                            const std::filesystem::path& topologies_dir,
                                            std::string_view field) {
  ClusterTopology t;
  if (!value.empty()) t = load_cluster_topology(value, topologies_dir, field);
  if (!t.node) {
    t.node = default_node_of_device(device.id, topologies_dir, field);
    t.default_node = true;
  }
  ValidationReport report;
  hardware::validate_node_for_device(*t.node, device, report, field);
  throw_if_errors(report);
  return t;
}

}  // namespace vramsim::io
