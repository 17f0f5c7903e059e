// Training scenario files (`vramsim train scenario.toml`) and cluster topology files
// (`--topology FILE`). Every value keeps its file:line so that problems found later point at the
// user's text; unknown keys are reported with "did you mean".
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
#include "sim/io/scenario_loader.hpp"

namespace vramsim::io {

struct TrainingScenario {
  std::string file;
  std::string text;
  std::optional<Located<std::string>> model, gpu, topology, strategy, pp_schedule, checkpointing,
      precision, optimizer;
  std::optional<Located<std::string>> calibration;  // hardware.calibration: a profile path
  std::optional<Located<std::int64_t>> num_gpus, gpus_per_node, tp, pp, pp_interleave, micro_batch,
      global_batch, seq_len;
  std::optional<Located<bool>> sequence_parallel, offload_optimizer;
};

/// Reads a training scenario. Throws ConfigError with every problem (file:line, field).
TrainingScenario load_training_scenario(const std::filesystem::path& file);

struct ClusterTopology {
  std::optional<hardware::NodeSpec> node;
  std::optional<Bandwidth> network_bandwidth;
  std::optional<Duration> network_latency;
};

/// Reads a `--topology` value (see above): a node id looked up in `topologies_dir`/nodes, a node
/// file, or a cluster file. Throws ConfigError with every problem; an unknown id lists the valid
/// ones under `field`.
ClusterTopology load_cluster_topology(const std::string& value,
                                      const std::filesystem::path& topologies_dir,
                                      std::string_view field = "--topology");

}  // namespace vramsim::io
