// The host (CPU) memory of a node sheet (hardware::NodeSpec::host_memory, issue 16): the named
// DGX sheets carry their datasheet figure in binary units, generic sheets none, a bad figure is
// refused naming the file, line and field; and the per-node rule plan serve and budget hold the
// KV offload tiers to (hardware::kv_tier_host_bytes_per_node).
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/hardware/node_spec.hpp"
#include "sim/io/topology_loader.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

namespace fs = std::filesystem;
using namespace vramsim;
using Catch::Matchers::Contains;
using hardware::kv_tier_host_bytes_per_node;

namespace {

const fs::path kTopologies = fs::path(VRAMSIM_SOURCE_ROOT) / "topologies";

// A generic two-GPU PCIe node sheet with `host_line` among its top-level keys (line 4).
std::string node_text(const std::string& host_line) {
  return "id = \"box-2x\"\ndescription = \"two GPUs on PCIe\"\nnum_gpus = 2\n" + host_line +
         "\nsources = [\"test\"]\n[fabric]\nkind = \"pcie\"\nlatency = \"5.7us\"\n";
}

// The formatted problems of loading a node sheet with `host_line` ("" when it loads).
std::string problems_of(const io::testing::ScratchDir& dir, const std::string& host_line,
                        fs::path& file) {
  file = dir / "nodes" / "box-2x.toml";
  fs::create_directories(file.parent_path());
  std::ofstream(file) << node_text(host_line);
  try {
    (void)io::load_node_file(file);
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return {};
}

}  // namespace

TEST_CASE("the DGX node sheets carry their host memory in binary units, generic sheets none",
          "[hardware][io][node]") {
  // DGX H100 / H200 / B200 and DGX A100 640GB: "2 TB" of 64 GiB DIMMs; DGX A100 320GB: "1 TB"
  // (the sources in each sheet, topologies/README.md).
  CHECK(io::find_node("h100-sxm-8x-nvswitch", kTopologies).host_memory == TiB(2));
  CHECK(io::find_node("h200-8x-nvswitch", kTopologies).host_memory == TiB(2));
  CHECK(io::find_node("b200-8x-nvswitch", kTopologies).host_memory == TiB(2));
  CHECK(io::find_node("a100-sxm-80g-8x-nvswitch", kTopologies).host_memory == TiB(2));
  CHECK(io::find_node("a100-sxm-40g-8x-nvswitch", kTopologies).host_memory == TiB(1));
  // 2 TiB is 2,199,023,255,552 bytes: not the decimal 2 TB.
  CHECK(TiB(2).count() == 2199023255552);
  for (const std::string& id : io::node_ids(kTopologies)) {
    CAPTURE(id);
    const hardware::NodeSpec n = io::find_node(id, kTopologies);
    // A generic sheet takes any device, so it cannot know the server's memory.
    if (!n.device_id) CHECK_FALSE(n.host_memory.has_value());
    if (!n.host_memory) continue;
    // Every figure has its own source entry.
    bool cited = false;
    for (const std::string& s : n.sources) cited = cited || s.rfind("Host memory: ", 0) == 0;
    CHECK(cited);
  }
}

TEST_CASE("a node sheet's host_memory is optional, and a bad one names the file, line and field",
          "[hardware][io][node]") {
  const io::testing::ScratchDir dir("node-host-memory");
  fs::path file;
  CHECK(problems_of(dir, "", file).empty());
  CHECK_FALSE(io::load_node_file(file).host_memory.has_value());
  CHECK(problems_of(dir, "host_memory = \"512GiB\"", file).empty());
  CHECK(io::load_node_file(file).host_memory == GiB(512));

  const std::string zero = problems_of(dir, "host_memory = \"0GiB\"", file);
  CHECK_THAT(zero, Contains(file.string() + ":4: host_memory: must be positive, got 0 B"));
  const std::string bare = problems_of(dir, "host_memory = 2048", file);
  CHECK_THAT(bare, Contains(file.string() + ":4: host_memory: the bare number 2048"));
  const std::string huge = problems_of(dir, "host_memory = \"65TiB\"", file);
  CHECK_THAT(huge, Contains(file.string() + ":4: host_memory: "));
  CHECK_THAT(huge, Contains("is above the accepted"));
  const std::string word = problems_of(dir, "host_memory = \"lots\"", file);
  CHECK_THAT(word, Contains(file.string() + ":4: host_memory: "));
}

TEST_CASE("the KV tiers on a node: engines that fit it share its memory, a wider engine puts "
          "its share on each node",
          "[hardware][node][kv][offload]") {
  const Bytes tier = GiB(300);
  // Eight 1-GPU engines fill an 8-GPU node: 8 x 300 GiB = 2400 GiB.
  CHECK(kv_tier_host_bytes_per_node(tier, 8, 1, 8) == GiB(2400));
  // Eight TP-2 engines take two nodes of four: 4 x 300 GiB = 1200 GiB on each.
  CHECK(kv_tier_host_bytes_per_node(tier, 8, 2, 8) == GiB(1200));
  // Three 3-GPU engines: two fit a node (6 of its 8 GPUs), 600 GiB.
  CHECK(kv_tier_host_bytes_per_node(tier, 3, 3, 8) == GiB(600));
  // Fewer engines than fit: all on one node.
  CHECK(kv_tier_host_bytes_per_node(tier, 1, 2, 8) == GiB(300));
  // One TP-8 x PP-2 engine over two 8-GPU nodes: each holds 8 of its 16 workers, half the tier.
  CHECK(kv_tier_host_bytes_per_node(tier, 1, 16, 8) == GiB(150));
  // ... rounded up to a byte: 3 B x 8 / 16 = 1.5 B -> 2 B.
  CHECK(kv_tier_host_bytes_per_node(Bytes(3), 1, 16, 8) == Bytes(2));
  CHECK(kv_tier_host_bytes_per_node(Bytes(0), 8, 1, 8) == Bytes(0));
  CHECK(kv_tier_host_bytes_per_node(tier, 0, 1, 8) == Bytes(0));
}

TEST_CASE("a GPU's default node sheet is the largest one naming it, else pcie-8x",
          "[hardware][io][node]") {
  CHECK(io::default_node_of_device("h100-sxm", kTopologies).id == "h100-sxm-8x-nvswitch");
  CHECK(io::default_node_of_device("a100-sxm-40g", kTopologies).id == "a100-sxm-40g-8x-nvswitch");
  // No sheet names the L4: the generic pcie-8x, which records no host memory.
  const hardware::NodeSpec l4 = io::default_node_of_device("l4", kTopologies);
  CHECK(l4.id == "pcie-8x");
  CHECK_FALSE(l4.host_memory.has_value());
}
