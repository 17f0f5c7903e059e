// plan serve's bound on the host memory its KV offload tiers pin: --max-host-memory (the
// deployment's tiers together) or, without it, the host_memory of each row's node sheets, per
// node (hardware::kv_tier_host_bytes_per_node: every vLLM engine pins a tier of its own, and
// the engines on one node share its memory). The node sheets are read through the search's
// shared KvLinkTopologies.
#pragma once

#include <optional>
#include <string>

#include "sim/core/units.hpp"
#include "sim/run/plan_serve_run.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/serve_run.hpp"

namespace vramsim::run {

/// Row `r`, sized as `a`, against its node sheets' host memory: the skip reason when the
/// fullest node's tiers exceed it, nullopt when they fit or no sheet records a figure. Pools on
/// one GPU type share a node's memory (the larger engine decides how many fit); pools on two
/// types sit on two nodes (a node sheet holds one GPU type), each checked alone. `options`
/// gives hardware.topology and the data-parallel size. Throws the ConfigError of a node's read
/// (hardware.topology naming a node the GPU cannot populate).
std::optional<std::string> over_node_host_memory(KvLinkTopologies& topologies,
                                                 const ServeOptions& options,
                                                 const PlanServeRow& r, const ServeAnswer& a);

/// PlanServeAnswer::host_memory_bound: the flag, or each searched GPU's node sheet and its
/// figure ("none recorded: not bounded" where the sheet has none).
std::string host_memory_bound_text(const std::optional<Bytes>& max_host_memory,
                                   KvLinkTopologies& topologies, const std::string& topology,
                                   const PlanServeSpace& space);

/// What the search reads from its node sheets, as text for plan_serve_fingerprint: for each
/// searched GPU (space.gpus, in order) the node of `topology` it sits in (its default sheet
/// without one), that node's GPU count and host memory in bytes, or the read's error. A node
/// sheet edited between a run and its --resume (its host_memory, its num_gpus) then changes
/// the digest, and the stale journal is not reused.
std::string node_host_memory_inputs(KvLinkTopologies& topologies, const std::string& topology,
                                    const PlanServeSpace& space);

}  // namespace vramsim::run
