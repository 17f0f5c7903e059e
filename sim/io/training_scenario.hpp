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
//   [parallel]
//   strategy = "fsdp-full"             # tp, pp, pp_schedule, pp_interleave, sequence_parallel
//   [batch]
//   micro_batch = 2                    # global_batch, seq_len
//   [memory]
//   checkpointing = "selective"        # precision, optimizer, offload_optimizer
//
// A topology file names the node and the network between nodes:
//   node = "h100-sxm-8x-nvswitch"      # topologies/nodes/<id>.toml (optional)
//   [network]
//   bandwidth_per_gpu = "400Gbps"      # inter-node, per GPU, one direction
//   latency = "5us"
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "sim/core/units.hpp"
#include "sim/io/scenario_loader.hpp"

namespace vramsim::io {

struct TrainingScenario {
  std::string file;
  std::string text;
  std::optional<Located<std::string>> model, gpu, topology, strategy, pp_schedule, checkpointing,
      precision, optimizer;
  std::optional<Located<std::int64_t>> num_gpus, gpus_per_node, tp, pp, pp_interleave,
      micro_batch, global_batch, seq_len;
  std::optional<Located<bool>> sequence_parallel, offload_optimizer;
};

/// Reads a training scenario. Throws ConfigError with every problem (file:line, field).
TrainingScenario load_training_scenario(const std::filesystem::path& file);

struct ClusterTopology {
  std::optional<std::string> node;  // node id from topologies/nodes
  std::optional<Bandwidth> network_bandwidth;
  std::optional<Duration> network_latency;
};

/// Reads a `--topology` file. Throws ConfigError with every problem.
ClusterTopology load_cluster_topology(const std::filesystem::path& file);

}  // namespace vramsim::io
