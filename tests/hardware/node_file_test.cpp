// A node file outside topologies/ (issue 18, "valid inputs refused"): it may name the built-in
// device sheets of topologies/devices, as well as those of a devices/ folder beside its own.
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/io/topology_loader.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

namespace fs = std::filesystem;
using namespace vramsim;
using Catch::Matchers::Contains;

namespace {

using io::testing::ScratchDir;  // under the system temp dir: nothing of topologies/ above it

/// Writes `text` to `relative` under `dir`, creating its folders.
fs::path write(const ScratchDir& dir, const std::string& relative, const std::string& text) {
  const fs::path file = dir / relative;
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
  return file;
}

std::string node_text(const std::string& id, const std::string& device) {
  return "id = \"" + id + "\"\ndescription = \"four GPUs on NVSwitch\"\nnum_gpus = 4\ndevice = \"" +
         device + "\"\nsources = [\"test\"]\n[fabric]\nkind = \"nvswitch\"\nlatency = \"3.4us\"\n";
}

template <typename F>
std::string config_error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a node file outside topologies names a built-in device", "[hardware][io][node]") {
  ScratchDir dir("node-builtin");
  for (const std::string device : {"h100-sxm", "a100-sxm-80g", "mi300x"}) {
    CAPTURE(device);
    const fs::path file = write(dir, "mine/my-4x.toml", node_text("my-4x", device));
    const hardware::NodeSpec node = io::load_node_file(file);
    CHECK(node.num_gpus == 4);
    CHECK(node.device_id == device);
    // It populates that device like a node of topologies/nodes does.
    const hardware::DeviceSpec spec = io::find_device(device, io::default_topologies_dir());
    ValidationReport report;
    hardware::validate_node_for_device(node, spec, report);
    if (device == "mi300x") {
      CHECK_FALSE(report.ok());  // no NVLink on an AMD part: the node's fabric is refused
    } else {
      CHECK(report.ok());
    }
  }
}

TEST_CASE("a node file outside topologies naming no known device lists the built-in ids",
          "[hardware][io][node]") {
  ScratchDir dir("node-unknown");
  const fs::path file = write(dir, "mine/my-4x.toml", node_text("my-4x", "h100-sxn"));
  const std::string text = config_error_of([&] { io::load_node_file(file); });
  CHECK_THAT(text,
             Contains(file.string() + ":4: device: unknown device id 'h100-sxn'; valid ids: "));
  CHECK_THAT(text, Contains("h100-sxm") && Contains("l40s"));
}

TEST_CASE("a node file beside its own devices folder names its devices first, then the built-in",
          "[hardware][io][node]") {
  ScratchDir dir("node-sibling");
  const std::string device_sheet =
      fs::path(io::default_topologies_dir() / "devices" / "h100-sxm.toml").string();
  std::ifstream in(device_sheet);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string own_id = "zz-own-gpu";
  const std::string::size_type id_at = text.find("id = \"h100-sxm\"");
  REQUIRE(id_at != std::string::npos);
  text.replace(id_at, std::string("id = \"h100-sxm\"").size(), "id = \"" + own_id + "\"");
  write(dir, "devices/" + own_id + ".toml", text);
  CHECK(io::load_node_file(write(dir, "nodes/own-4x.toml", node_text("own-4x", own_id))).device_id ==
        own_id);
  CHECK(io::load_node_file(write(dir, "nodes/h100-4x.toml", node_text("h100-4x", "h100-sxm")))
            .device_id == "h100-sxm");
  const fs::path bad = write(dir, "nodes/bad-4x.toml", node_text("bad-4x", "nope"));
  CHECK_THAT(config_error_of([&] { io::load_node_file(bad); }),
             Contains("valid ids: " + own_id + ", a100-pcie-80g, "));
}

TEST_CASE("a node file's absurd fabric bandwidth or latency is refused at its field",
          "[hardware][io][node]") {
  ScratchDir dir("node-links");
  struct Case {
    std::string fabric;  // the [fabric] lines after kind
    std::string expect;
  };
  for (const Case& c : {
           Case{"latency = \"3.4us\"\nbandwidth_per_direction = \"1B/s\"\n",
                "fabric.bandwidth_per_direction: 1 B/s is outside the accepted range"},
           Case{"latency = \"3.4us\"\nbandwidth_per_direction = \"10000TB/s\"\n",
                "fabric.bandwidth_per_direction"},
           Case{"latency = \"120min\"\n", "fabric.latency: 7200 s is above the accepted 1 s"},
       }) {
    CAPTURE(c.fabric);
    const std::string text =
        "id = \"my-4x\"\ndescription = \"four GPUs\"\nnum_gpus = 4\ndevice = \"h100-sxm\"\n"
        "sources = [\"test\"]\n[fabric]\nkind = \"nvswitch\"\n" + c.fabric;
    const fs::path file = write(dir, "mine/my-4x.toml", text);
    const std::string error = config_error_of([&] { (void)io::load_node_file(file); });
    CHECK_THAT(error, Contains(c.expect));
    CHECK_THAT(error, Contains("my-4x.toml"));
  }
  // A real fabric's figures pass.
  const fs::path ok = write(dir, 
      "mine/my-4x.toml",
      "id = \"my-4x\"\ndescription = \"four GPUs\"\nnum_gpus = 4\ndevice = \"h100-sxm\"\n"
      "sources = [\"test\"]\n[fabric]\nkind = \"nvswitch\"\nlatency = \"3.4us\"\n"
      "bandwidth_per_direction = \"450GB/s\"\n");
  CHECK(io::load_node_file(ok).num_gpus == 4);
}
