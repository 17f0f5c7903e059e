#include "sim/io/topology_loader.hpp"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "sim/cost/datasheet.hpp"
#include "tests/catch.hpp"

namespace fs = std::filesystem;
using namespace vramsim;
using hardware::DeviceSpec;
using hardware::NodeSpec;

namespace {

const fs::path kTopologies = fs::path(VRAMSIM_SOURCE_ROOT) / "topologies";

/// A throw-away topologies/ tree (devices/ and nodes/) under the temp folder.
class TempTopologies {
 public:
  TempTopologies() {
    static std::atomic<int> counter{0};
    root_ = fs::temp_directory_path() /
            ("vramsim-topo-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(root_ / "devices");
    fs::create_directories(root_ / "nodes");
  }
  ~TempTopologies() { fs::remove_all(root_); }
  TempTopologies(const TempTopologies&) = delete;
  TempTopologies& operator=(const TempTopologies&) = delete;

  fs::path write(const std::string& folder, const std::string& id, const std::string& text) {
    const fs::path file = root_ / folder / (id + ".toml");
    std::ofstream(file) << text;
    return file;
  }
  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

/// A valid device sheet; `replace` swaps one line for a broken one.
std::string device_text(const std::string& from = "", const std::string& to = "") {
  std::string text = R"(id = "tiny"
name = "Tiny GPU"
vendor = "nvidia"
architecture = "test"
sources = ["made up for a test"]
[memory]
marketed = "16GB"
total = "15GiB"
total_basis = "measured"
kind = "GDDR6"
bandwidth = "300GB/s"
[compute]
fp32 = "10TFLOPS"
fp16 = "40TFLOPS"
num_sms = 40
compute_capability = "8.9"
[pcie]
generation = 4
bandwidth_per_direction = "32GB/s"
)";
  if (!from.empty()) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  return text;
}

/// The formatted problems of the ConfigError that `f` throws ("" when it does not throw).
template <typename F>
std::string config_error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return {};
}

const std::vector<std::string> kDeviceIds = {
    "a100-pcie-80g", "a100-sxm-40g", "a100-sxm-80g", "a10g",     "a40",       "b200",
    "b300",          "gb200",        "gh200",        "h100-nvl", "h100-pcie", "h100-sxm",
    "h20",           "h200",         "l20",          "l4",       "l40s",      "mi300x",
    "mi325x",        "mi355x",       "rtx-3090",     "rtx-4090", "rtx-5090",  "rtx-a6000",
    "rtx-pro-6000",  "t4",           "v100-sxm2-32g"};

}  // namespace

TEST_CASE("the topologies folder holds exactly the documented devices", "[hardware][io]") {
  CHECK(io::device_ids(kTopologies) == kDeviceIds);
}

TEST_CASE("every listed device loads with positive memory, bandwidth and bf16 peak",
          "[hardware][io]") {
  const std::string id = GENERATE(from_range(kDeviceIds));
  CAPTURE(id);
  const DeviceSpec d = io::find_device(id, kTopologies);
  CHECK(d.id == id);
  CHECK_FALSE(d.name.empty());
  CHECK(d.memory_total > Bytes(0));
  CHECK(d.memory_bandwidth.bytes_per_second() > 0);
  CHECK(hardware::peak_flop_rate(d, DType::kBf16).per_second() > 0);
  CHECK(d.peak.fp16.per_second() >= d.peak.fp32.per_second());
  CHECK(d.pcie.bandwidth_per_direction.bytes_per_second() > 0);
  CHECK_FALSE(d.sources.empty());
  // The runtime never reports more than what is fitted (the marketed figure read as GiB) and
  // always reports less than the whole of it.
  CHECK(d.memory_total.gib() < d.memory_marketed.gb());
}

TEST_CASE("H100 SXM reports about 79.2 GiB: below 80 GiB yet above 80 GB", "[hardware][io]") {
  const DeviceSpec h100 = io::find_device("h100-sxm", kTopologies);
  CHECK(h100.memory_marketed == GB(80));
  CHECK(h100.memory_total == Bytes(85'045'477'376));
  CHECK(h100.memory_total.gib() == Approx(79.2).margin(0.05));
  CHECK(h100.memory_total < GiB(80));  // what the chips hold
  CHECK(h100.memory_total > GB(80));   // the datasheet's "80GB" is binary in practice
  CHECK(h100.peer_link.has_value());
  CHECK(h100.peer_link->bandwidth_per_direction.bytes_per_second() == 450e9);
  CHECK(h100.peak.bf16->per_second() == Approx(989.4e12));
  // NVIDIA H100 Tensor Core GPU Architecture whitepaper: 132 SMs on the SXM5 part.
  CHECK(h100.num_sms == 132);
}

TEST_CASE("the RTX 4090 total is the measured vLLM reading", "[hardware][io]") {
  const DeviceSpec d = io::find_device("rtx-4090", kTopologies);
  CHECK(d.memory_total == Bytes(25'250'627'584));
  CHECK_FALSE(d.peer_link.has_value());
}

TEST_CASE("device ids are case-insensitive", "[hardware][io]") {
  CHECK(io::find_device("H100-SXM", kTopologies).id == "h100-sxm");
  CHECK(io::find_device("Mi300X", kTopologies).vendor == hardware::Vendor::kAmd);
}

TEST_CASE("an unknown device id lists the valid ids", "[hardware][io]") {
  const std::string text = config_error_of([] { io::find_device("h100", kTopologies, "--gpu"); });
  CHECK_THAT(text, Catch::Contains("--gpu: unknown device id 'h100'"));
  CHECK_THAT(text, Catch::Contains("a100-pcie-80g, a100-sxm-40g"));
  CHECK_THAT(text, Catch::Contains("rtx-pro-6000, t4"));
}

TEST_CASE("a valid temporary device sheet loads", "[hardware][io]") {
  TempTopologies t;
  const fs::path file = t.write("devices", "tiny", device_text());
  const DeviceSpec d = io::load_device_file(file);
  CHECK(d.memory_total == GiB(15));
  CHECK(d.memory_marketed == GB(16));
  CHECK_FALSE(d.peak.bf16.has_value());
  CHECK(d.num_sms == 40);
  CHECK(d.source_file == file.string());
}

TEST_CASE("a device sheet's fitted matmul efficiency replaces the datasheet default",
          "[hardware][io]") {
  TempTopologies t;
  const DeviceSpec plain = io::load_device_file(t.write("devices", "tiny", device_text()));
  CHECK_FALSE(plain.fitted_matmul_efficiency.has_value());
  CHECK(cost::device_efficiencies(plain).matmul == cost::kMatmulEfficiency);
  const DeviceSpec fitted = io::load_device_file(t.write(
      "devices", "tiny",
      device_text("[pcie]\n", "[fitted]\nmatmul_efficiency = 0.9\nmatmul_source = \"a "
                               "profile\"\n[pcie]\n")));
  CHECK(fitted.fitted_matmul_efficiency == 0.9);
  CHECK(fitted.fitted_matmul_source == "a profile");
  CHECK(cost::device_efficiencies(fitted).matmul == 0.9);
  CHECK(cost::device_efficiencies(fitted).memory == cost::kMemoryEfficiency);
  // The shipped RTX 4090 sheet carries LLMServingSim's profile; the others do not.
  const DeviceSpec rtx4090 = io::find_device("rtx-4090", kTopologies);
  CHECK(rtx4090.fitted_matmul_efficiency == 0.96);
  CHECK_FALSE(io::find_device("h100-sxm", kTopologies).fitted_matmul_efficiency);
}

TEST_CASE("broken device sheets give file:line and the field", "[hardware][io]") {
  TempTopologies t;
  const auto problems = [&](const std::string& from, const std::string& to) {
    const fs::path file = t.write("devices", "tiny", device_text(from, to));
    return std::make_pair(file.string(), config_error_of([&] { io::load_device_file(file); }));
  };
  SECTION("a bad unit") {
    const auto [file, text] = problems("total = \"15GiB\"", "total = \"15gib\"");
    CHECK_THAT(text, Catch::Contains(file + ":8: memory.total: unknown unit \"gib\""));
  }
  SECTION("a bare number") {
    const auto [file, text] = problems("bandwidth = \"300GB/s\"", "bandwidth = 300");
    CHECK_THAT(text, Catch::Contains(file + ":11: memory.bandwidth: the bare number 300"));
  }
  SECTION("a missing field") {
    const auto [file, text] = problems("fp16 = \"40TFLOPS\"\n", "");
    CHECK_THAT(text, Catch::Contains(file + ":12: compute.fp16: missing required field"));
  }
  SECTION("a missing or impossible SM count") {
    const auto [file, text] = problems("num_sms = 40\n", "");
    CHECK_THAT(text, Catch::Contains(file + ":12: compute.num_sms: missing required field"));
    const auto [file2, text2] = problems("num_sms = 40", "num_sms = 0");
    CHECK_THAT(text2, Catch::Contains(file2 + ":15: compute.num_sms: must be between 1 and 4096"));
  }
  SECTION("a missing or malformed compute capability") {
    const auto [file, text] = problems("compute_capability = \"8.9\"\n", "");
    CHECK_THAT(text, Catch::Contains(file + ":12: compute.compute_capability: missing required "
                                            "field"));
    for (const char* bad : {"89", "8.", ".9", "8.9.1", "x.y", "8.10"}) {
      INFO(bad);
      const auto [file2, text2] = problems("compute_capability = \"8.9\"",
                                           std::string("compute_capability = \"") + bad + "\"");
      CHECK_THAT(text2, Catch::Contains(file2 + ":16: compute.compute_capability: expected "
                                                "major.minor"));
    }
  }
  SECTION("a typo'd key") {
    const auto [file, text] = problems("bandwidth = \"300GB/s\"", "bandwith = \"300GB/s\"");
    CHECK_THAT(text, Catch::Contains(file + ":11: memory.bandwith: unknown key; did you mean "
                                            "\"memory.bandwidth\"?"));
    CHECK_THAT(text, Catch::Contains("memory.bandwidth: missing required field"));
  }
  SECTION("a syntax error") {
    const auto [file, text] = problems("kind = \"GDDR6\"", "kind = \"GDDR6");
    CHECK_THAT(text, Catch::Contains(file + ":10: TOML syntax error at column"));
  }
  SECTION("an id that is not the file name") {
    const auto [file, text] = problems("id = \"tiny\"", "id = \"small\"");
    CHECK_THAT(text, Catch::Contains(file + ":1: id: \"small\" differs from the file name"));
  }
  SECTION("a total above what the chips can hold") {
    const auto [file, text] = problems("total = \"15GiB\"", "total = \"16.5GiB\"");
    CHECK_THAT(text, Catch::Contains(file + ":8: memory.total: 16.50 GiB exceeds the marketed"));
  }
  SECTION("a fitted matmul efficiency out of range or without its source") {
    const std::string fitted =
        "[fitted]\nmatmul_efficiency = 1.2\nmatmul_source = \"a profile\"\n";
    const auto [file, text] = problems("[pcie]\n", fitted + "[pcie]\n");
    CHECK_THAT(text, Catch::Contains(file + ":18: fitted.matmul_efficiency: must be in (0, 1], "
                                            "got 1.2"));
    const auto [file2, text2] =
        problems("[pcie]\n", "[fitted]\nmatmul_efficiency = 0.9\n[pcie]\n");
    CHECK_THAT(text2, Catch::Contains("fitted.matmul_source: missing required field"));
  }
  SECTION("every problem of the file at once") {
    const auto [file, text] = problems("vendor = \"nvidia\"", "vendor = \"intel\"\nfoo = 1");
    CHECK_THAT(text, Catch::Contains(file + ":3: vendor: \"intel\" is not one of: nvidia, amd"));
    CHECK_THAT(text, Catch::Contains(file + ":4: foo: unknown key"));
  }
}

TEST_CASE("every node file loads and fits its own device", "[hardware][io]") {
  const std::vector<std::string> ids = io::node_ids(kTopologies);
  REQUIRE(ids.size() >= 10);
  for (const std::string& id : ids) {
    CAPTURE(id);
    const NodeSpec n = io::find_node(id, kTopologies);
    CHECK(n.id == id);
    CHECK(n.num_gpus >= 1);
    CHECK_FALSE(n.sources.empty());
    if (n.device_id) {
      const DeviceSpec d = io::find_device(*n.device_id, kTopologies);
      CHECK(hardware::fabric_bandwidth(n, d).has_value());
    }
  }
}

TEST_CASE("the HGX H100 node has 8 GPUs at 450 GB/s each way", "[hardware][io]") {
  const NodeSpec n = io::find_node("h100-sxm-8x-nvswitch", kTopologies);
  CHECK(n.num_gpus == 8);
  CHECK(n.device_id == "h100-sxm");
  CHECK(n.fabric.kind == hardware::FabricKind::kNvswitch);
  CHECK(n.fabric.bandwidth_per_direction->bytes_per_second() == 450e9);
  CHECK(n.fabric.latency == nanoseconds(3400));
}

TEST_CASE("generic nodes take their bandwidth from the device", "[hardware][io]") {
  const NodeSpec pcie = io::find_node("pcie-2x", kTopologies);
  const NodeSpec nvlink = io::find_node("nvlink-2x", kTopologies);
  const DeviceSpec l4 = io::find_device("l4", kTopologies);
  const DeviceSpec a100 = io::find_device("a100-pcie-80g", kTopologies);
  CHECK(hardware::fabric_bandwidth(pcie, l4)->bytes_per_second() == 32e9);
  CHECK(hardware::fabric_bandwidth(nvlink, a100)->bytes_per_second() == 300e9);
  CHECK_FALSE(hardware::fabric_bandwidth(nvlink, l4).has_value());
  ValidationReport report;
  hardware::validate_node_for_device(nvlink, l4, report, "hardware.node");
  REQUIRE_FALSE(report.ok());
  CHECK_THAT(report.format(), Catch::Contains("hardware.node: node 'nvlink-2x' joins its GPUs "
                                              "with nvlink-bridge, which l4 does not have"));
}

TEST_CASE("an unknown node id lists the valid ids", "[hardware][io]") {
  const std::string text = config_error_of([] { io::find_node("dgx", kTopologies); });
  CHECK_THAT(text, Catch::Contains("node: unknown node id 'dgx'"));
  CHECK_THAT(text, Catch::Contains("h100-sxm-8x-nvswitch"));
}

TEST_CASE("broken node files give file:line and the field", "[hardware][io]") {
  TempTopologies t;
  t.write("devices", "tiny", device_text());
  const fs::path file = t.write("nodes", "tiny-4x-nvswitch", R"(id = "tiny-4x-nvswitch"
description = "four tiny GPUs"
num_gpus = 4
device = "tinny"
sources = ["test"]
[fabric]
kind = "nvswitch"
latency = 3
)");
  const std::string text = config_error_of([&] { io::load_node_file(file); });
  CHECK_THAT(text, Catch::Contains(file.string() + ":4: device: unknown device id 'tinny'; "
                                                   "valid ids: tiny"));
  CHECK_THAT(text, Catch::Contains(file.string() + ":8: fabric.latency: the bare number 3"));
}

TEST_CASE("a node whose fabric its device lacks is refused", "[hardware][io]") {
  TempTopologies t;
  t.write("devices", "tiny", device_text());
  t.write("nodes", "tiny-2x-nvlink-bridge", R"(id = "tiny-2x-nvlink-bridge"
description = "two tiny GPUs on a bridge they do not have"
num_gpus = 2
device = "tiny"
sources = ["test"]
[fabric]
kind = "nvlink-bridge"
latency = "3us"
)");
  const std::string text =
      config_error_of([&] { io::find_node("tiny-2x-nvlink-bridge", t.root()); });
  CHECK_THAT(text, Catch::Contains("which tiny does not have"));
}
