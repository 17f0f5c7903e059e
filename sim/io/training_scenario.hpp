// Cluster topology files (`--topology FILE`, hardware.topology of training scenarios). Training
// scenario files themselves are read from the training option schema
// (sim/run/train_options.hpp, above io), with io::TomlReader; they look like this:
//
//   description = "Llama-3.1-8B, FSDP on one H100 node"
//   [model]
//   id = "meta-llama/Llama-3.1-8B"
//   [hardware]
//   gpu = "h100-sxm"
//   num_gpus = 8
//   gpus_per_node = 8
//   topology = "cluster.toml"          # optional, relative to this file
//   calibration = "profile.json"       # optional, relative to this file (as in serving)
//   [parallel]
//   strategy = "fsdp-full"             # tp, pp, pp_schedule, pp_interleave, sequence_parallel
//   [batch]
//   micro_batch = 2                    # global_batch, seq_len
//   [memory]
//   checkpointing = "selective"        # precision, optimizer, offload_optimizer
//
// `--topology` (or hardware.topology) takes one of three things:
//   - a node id of topologies/nodes ("h100-sxm-8x-nvswitch"): its GPUs per node and fabric, with
//     the default network between nodes;
//   - a node file in the same format (topologies/README.md, "Node file");
//   - a cluster file: a node (id, or a node file's path relative to the cluster file) and the
//     network between nodes, which replaces the default:
//       node = "h100-sxm-8x-nvswitch"      # optional
//       [network]
//       bandwidth_per_gpu = "400Gbps"      # inter-node, per GPU, one direction
//       latency = "5us"
// A file is read as a node file when it has a top-level `num_gpus` or a `[fabric]` table.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/units.hpp"
#include "sim/hardware/node_spec.hpp"

namespace vramsim::io {

struct ClusterTopology {
  std::optional<hardware::NodeSpec> node;
  /// cluster_topology_for_device: the node is the device's default sheet
  /// (default_node_of_device), not one the value named.
  bool default_node = false;
  std::optional<Bandwidth> network_bandwidth;
  std::optional<Duration> network_latency;
};

/// Reads a `--topology` value (see above): a node id looked up in `topologies_dir`/nodes, a node
/// file, or a cluster file. Throws ConfigError with every problem; an unknown id lists the valid
/// ones under `field`.
ClusterTopology load_cluster_topology(const std::string& value,
                                      const std::filesystem::path& topologies_dir,
                                      std::string_view field = "--topology");

/// The topology `value` (as load_cluster_topology reads it; "": none) puts `device` in, with
/// its node always set: the value's node, else the device's default node sheet
/// (default_node_of_device; default_node set). The one read serve's KV link and budget's node
/// share, so that both refuse alike: throws ConfigError under `field` for an unknown node or
/// file, or a node `device` cannot populate (validate_node_for_device: a node built from
/// another GPU, or a fabric the device lacks).
ClusterTopology cluster_topology_for_device(const std::string& value,
                                            const hardware::DeviceSpec& device,
                                            const std::filesystem::path& topologies_dir,
                                            std::string_view field = "hardware.topology");

}  // namespace vramsim::io
