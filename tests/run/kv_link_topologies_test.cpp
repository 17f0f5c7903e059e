// The KV link's topology read once per (hardware.topology, decode GPU) and shared
// (sim/run/serve_run, KvLinkTopologies): a shared read gives the same link as a configuration's
// own, a failed read fails the same way each time, and a search's configurations share it.
#include <filesystem>
#include <string>

#include "sim/core/error.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/serve_run.hpp"
#include "tests/catch.hpp"

namespace run = vramsim::run;
namespace fs = std::filesystem;
using vramsim::ConfigError;

namespace {

const fs::path kTopologies = fs::path(VRAMSIM_SOURCE_ROOT) / "topologies";

run::ServeConfig config(const std::string& extra) {
  return run::serve_config(run::resolve_serve_options(run::load_serve_scenario_text(
      "seed = 1\n[model]\nid = \"meta-llama/Llama-3.1-8B-Instruct\"\n[hardware]\n"
      "gpu = \"h100-sxm\"\n[engine]\nmax_model_len = 8192\n[workload]\n"
      "synthetic = \"azure-conv\"\nnum_requests = 20\nrate = 4\n[serving]\n"
      "prefill_instances = 1\ndecode_instances = 1\n" +
          extra,
      "kv_link.toml")));
}

void same_link(const run::KvTransferLink& a, const run::KvTransferLink& b) {
  CHECK(a.kind == b.kind);
  CHECK(a.node == b.node);
  CHECK(a.node_gpus == b.node_gpus);
  CHECK(a.bandwidth.bytes_per_second() == b.bandwidth.bytes_per_second());
  CHECK(a.latency == b.latency);
  CHECK(a.lanes == b.lanes);
  CHECK(a.bytes_per_token == b.bytes_per_token);
}

}  // namespace

TEST_CASE("a shared KV link topology is read once per decode GPU and gives every "
          "configuration the link its own read gives",
          "[run][serve][disaggregated]") {
  auto shared = std::make_shared<run::KvLinkTopologies>();
  for (const std::string extra :
       {"", "prefill_tp = 2\n", "prefill_gpu = \"h200\"\n", "decode_tp = 2\n"}) {
    INFO(extra);
    run::ServeConfig own = config(extra);
    run::ServeConfig with = own;
    with.disaggregated->link_topologies = shared;
    const run::ServeAnswer a = run::prepare_serve(own);
    const run::ServeAnswer b = run::prepare_serve(with);
    REQUIRE(a.kv_link);
    REQUIRE(b.kv_link);
    same_link(*a.kv_link, *b.kv_link);
  }
  // Four configurations, all decoding on h100-sxm with no --topology: one read.
  CHECK(shared->num_reads() == 1);
  const vramsim::hardware::DeviceSpec h100 = vramsim::io::find_device("h100-sxm", kTopologies);
  const vramsim::io::ClusterTopology& first = shared->get("", h100);
  const vramsim::io::ClusterTopology& again = shared->get("", h100);
  CHECK(&first == &again);
  REQUIRE(first.node);
  CHECK(first.node->id == "h100-sxm-8x-nvswitch");
  CHECK(shared->num_reads() == 1);
  (void)shared->get("", vramsim::io::find_device("h200", kTopologies));
  CHECK(shared->num_reads() == 2);
}

TEST_CASE("a shared KV link topology whose read failed refuses every configuration alike, "
          "naming hardware.topology",
          "[run][serve][disaggregated]") {
  auto shared = std::make_shared<run::KvLinkTopologies>();
  const vramsim::hardware::DeviceSpec h100 = vramsim::io::find_device("h100-sxm", kTopologies);
  std::string first, second;
  try {
    (void)shared->get("no-such-node", h100);
  } catch (const ConfigError& e) {
    first = e.report().format();
  }
  try {
    (void)shared->get("no-such-node", h100);
  } catch (const ConfigError& e) {
    second = e.report().format();
  }
  CHECK(first.find("hardware.topology") != std::string::npos);
  CHECK(first == second);
  CHECK(shared->num_reads() == 1);
}
