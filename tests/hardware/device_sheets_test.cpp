// The device sheets in topologies/devices: every one loads and carries an SM (or CU) count, and
// each sheet added for issue 14 holds two figures checked against the source its comments cite.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/io/topology_loader.hpp"
#include "tests/catch.hpp"

namespace fs = std::filesystem;
using namespace vramsim;
using hardware::DeviceSpec;

namespace {

const fs::path kTopologies = fs::path(VRAMSIM_SOURCE_ROOT) / "topologies";

DeviceSpec sheet(const std::string& id) { return io::find_device(id, kTopologies); }

double tflops(FlopRate r) { return r.per_second() / 1e12; }
double gb_per_s(Bandwidth b) { return b.bytes_per_second() / 1e9; }

}  // namespace

TEST_CASE("every sheet in topologies/devices loads with a positive SM count", "[hardware][io]") {
  const std::vector<std::string> ids = io::device_ids(kTopologies);
  REQUIRE(ids.size() >= 26);
  for (const std::string& id : ids) {
    CAPTURE(id);
    const DeviceSpec d = sheet(id);
    CHECK(d.id == id);
    CHECK(d.num_sms > 0);
    CHECK(d.memory_total > Bytes(0));
    CHECK(d.memory_total.gib() < d.memory_marketed.gb());
    CHECK(d.peak.fp16.per_second() >= d.peak.fp32.per_second());
    CHECK(d.sources.size() >= 1);
  }
}

TEST_CASE("every sheet carries the compute capability vLLM compares, bf16 exactly from 8.0",
          "[hardware][io]") {
  // CUDA compute capabilities (developer.nvidia.com/cuda-gpus); ROCm reports the gfx version.
  CHECK(sheet("t4").compute_capability == 75);
  CHECK(sheet("a10g").compute_capability == 86);
  CHECK(sheet("a100-sxm-80g").compute_capability == 80);
  CHECK(sheet("rtx-4090").compute_capability == 89);
  CHECK(sheet("h100-sxm").compute_capability == 90);
  CHECK(sheet("b200").compute_capability == 100);
  CHECK(sheet("b300").compute_capability == 103);
  CHECK(sheet("rtx-pro-6000").compute_capability == 120);
  CHECK(sheet("mi300x").compute_capability == 94);
  // vLLM takes bfloat16 from compute capability 8.0 on: the sheets without a bf16 rate are
  // exactly those below it.
  for (const std::string& id : io::device_ids(kTopologies)) {
    CAPTURE(id);
    const DeviceSpec d = sheet(id);
    CHECK((d.peak.bf16.has_value() && d.peak.bf16->per_second() > 0) ==
          (d.compute_capability >= 80));
  }
}

// Each check below names the source the sheet cites for the figure.

TEST_CASE("RTX 5090: 170 SMs and 32109 MiB as torch reports", "[hardware][io]") {
  const DeviceSpec d = sheet("rtx-5090");
  // torch 2.9 _CudaDeviceProperties: total_memory=32109MB, multi_processor_count=170.
  CHECK(d.num_sms == 170);
  CHECK(d.memory_total == MiB(32109));
  CHECK(d.memory_total_measured);
  // RTX Blackwell whitepaper: 1792 GB/s, 104.8 TFLOPS FP32; GeForce has no NVLink.
  CHECK(gb_per_s(d.memory_bandwidth) == Approx(1792));
  CHECK(tflops(d.peak.fp32) == Approx(104.8));
  CHECK_FALSE(d.peer_link.has_value());
}

TEST_CASE("RTX A6000: 768 GB/s and 154.8 TFLOPS dense FP16, no FP8", "[hardware][io]") {
  const DeviceSpec d = sheet("rtx-a6000");
  // RTX A6000 datasheet: 768 GB/s; 309.7 sparse tensor TFLOPS, i.e. 154.8 dense.
  CHECK(gb_per_s(d.memory_bandwidth) == Approx(768));
  CHECK(tflops(d.peak.fp16) == Approx(154.8));
  CHECK_FALSE(d.peak.fp8.has_value());  // Ampere has no FP8 tensor cores
  CHECK(d.memory_total == MiB(48676));  // torch total_memory=48676MB
  REQUIRE(d.peer_link.has_value());
  CHECK(d.peer_link->bridge_only);
}

TEST_CASE("A40: 696 GB/s and 149.7 TFLOPS BF16", "[hardware][io]") {
  const DeviceSpec d = sheet("a40");
  // NVIDIA A40 datasheet: 696 GB/s, BF16 149.7 TFLOPS dense.
  CHECK(gb_per_s(d.memory_bandwidth) == Approx(696));
  REQUIRE(d.peak.bf16.has_value());
  CHECK(tflops(*d.peak.bf16) == Approx(149.7));
  CHECK(d.memory_total == MiB(45416));  // torch total_memory=45416MB, ECC on
  CHECK(d.num_sms == 84);
}

TEST_CASE("L20: 864 GB/s, 119.5 TFLOPS dense BF16, total estimated from the L40S", "[hardware][io]") {
  const DeviceSpec d = sheet("l20");
  // NVIDIA L20 product brief: 864 GB/s; BF16 239 sparse = 119.5 dense; FP8 478 sparse = 239.
  CHECK(gb_per_s(d.memory_bandwidth) == Approx(864));
  CHECK(tflops(*d.peak.bf16) == Approx(119.5));
  CHECK(tflops(*d.peak.fp8) == Approx(239));
  CHECK_FALSE(d.memory_total_measured);
  CHECK(d.memory_total == sheet("l40s").memory_total);
  CHECK(d.num_sms == 92);
}

TEST_CASE("H20: 96 GB HBM3 at 4.0 TB/s and 148 TFLOPS BF16", "[hardware][io]") {
  const DeviceSpec d = sheet("h20");
  // NVIDIA H20 product brief: 96 GB HBM3, 4.0 TB/s, BF16 148 and FP8 296 TFLOPS dense.
  CHECK(d.memory_marketed == GB(96));
  CHECK(d.memory_kind == "HBM3");
  CHECK(gb_per_s(d.memory_bandwidth) == Approx(4000));
  CHECK(tflops(*d.peak.bf16) == Approx(148));
  CHECK(tflops(*d.peak.fp8) == Approx(296));
  // torch: total_memory=97285MB, multi_processor_count=78.
  CHECK(d.memory_total == MiB(97285));
  CHECK(d.num_sms == 78);
  REQUIRE(d.peer_link.has_value());
  CHECK(gb_per_s(d.peer_link->bandwidth_per_direction) == Approx(450));
}

TEST_CASE("H100 NVL: 94 GB at 3.9 TB/s, 835.5 TFLOPS dense BF16, bridge only", "[hardware][io]") {
  const DeviceSpec d = sheet("h100-nvl");
  // H100 datasheet, NVL column: 94 GB, 3.9 TB/s, BF16 1671 sparse; NVLink bridge 600 GB/s.
  CHECK(d.memory_marketed == GB(94));
  CHECK(gb_per_s(d.memory_bandwidth) == Approx(3900));
  CHECK(tflops(*d.peak.bf16) == Approx(1671.0 / 2));
  REQUIRE(d.peer_link.has_value());
  CHECK(d.peer_link->bridge_only);
  CHECK(gb_per_s(d.peer_link->bandwidth_per_direction) == Approx(300));
  CHECK_FALSE(d.memory_total_measured);
}

TEST_CASE("GH200: the Hopper GPU with 96 GB HBM3 at 4 TB/s and its NVLink-C2C host link",
          "[hardware][io]") {
  const DeviceSpec d = sheet("gh200");
  // GH200 datasheet: 96 GB HBM3, 4 TB/s, FP8 3958 sparse; NVLink-C2C 900 GB/s both directions.
  CHECK(d.memory_marketed == GB(96));
  CHECK(gb_per_s(d.memory_bandwidth) == Approx(4000));
  CHECK(tflops(*d.peak.fp8) == Approx(3958.0 / 2));
  CHECK(gb_per_s(d.pcie.bandwidth_per_direction) == Approx(450));
  CHECK(d.num_sms == 132);
}

TEST_CASE("B300: 148 SMs and 274113 MiB measured, 2.25 PFLOPS dense BF16", "[hardware][io]") {
  const DeviceSpec d = sheet("b300");
  // cudaGetDeviceProperties on B300 SXM6 AC: SM count 148, totalGlobalMem 274113 MiB.
  CHECK(d.num_sms == 148);
  CHECK(d.memory_total == MiB(274113));
  CHECK(d.memory_total_measured);
  // HGX B300 datasheet: 36 PFLOPS sparse BF16 per 8 GPUs; 1.8 TB/s NVLink per GPU.
  CHECK(tflops(*d.peak.bf16) == Approx(36000.0 / 8 / 2));
  CHECK(gb_per_s(d.peer_link->bandwidth_per_direction) == Approx(900));
  CHECK_FALSE(d.peak.int8.has_value());  // no per-GPU dense INT8 figure cited
}

TEST_CASE("GB200: 186 GB at 8 TB/s and 2.5 PFLOPS dense BF16 per GPU", "[hardware][io]") {
  const DeviceSpec d = sheet("gb200");
  // GB200 NVL72 datasheet: 13.4 TB and 576 TB/s per 72 GPUs; 360 PFLOPS sparse FP16/BF16.
  CHECK(d.memory_marketed == GB(186));
  CHECK(gb_per_s(d.memory_bandwidth) == Approx(576000.0 / 72));
  CHECK(tflops(*d.peak.bf16) == Approx(360000.0 / 72 / 2));
  CHECK(d.num_sms == 152);
  CHECK(gb_per_s(d.pcie.bandwidth_per_direction) == Approx(450));  // NVLink-C2C to Grace
}

TEST_CASE("MI325X: 256 GB HBM3E at 6 TB/s, 304 CUs, 1307.4 TFLOPS FP16", "[hardware][io]") {
  const DeviceSpec d = sheet("mi325x");
  // AMD Instinct MI325X data sheet.
  CHECK(d.vendor == hardware::Vendor::kAmd);
  CHECK(d.memory_marketed == GB(256));
  CHECK(gb_per_s(d.memory_bandwidth) == Approx(6000));
  CHECK(d.num_sms == 304);
  CHECK(tflops(d.peak.fp16) == Approx(1307.4));
  CHECK(tflops(*d.peak.fp8) == Approx(2614.9));
}

TEST_CASE("MI355X: 288 GB HBM3E at 8 TB/s, 256 CUs, 5033.2 TFLOPS FP8, no TF32",
          "[hardware][io]") {
  const DeviceSpec d = sheet("mi355x");
  // AMD Instinct MI355X data sheet; rocminfo 'Compute Unit: 256'.
  CHECK(d.memory_marketed == GB(288));
  CHECK(gb_per_s(d.memory_bandwidth) == Approx(8000));
  CHECK(d.num_sms == 256);
  CHECK(tflops(*d.peak.fp8) == Approx(5033.2));
  CHECK(tflops(*d.peak.bf16) == Approx(2516.6));
  CHECK_FALSE(d.peak.tf32.has_value());
  REQUIRE(d.peer_link.has_value());
  CHECK(d.peer_link->kind == hardware::PeerLinkKind::kInfinityFabric);
  CHECK(gb_per_s(d.peer_link->bandwidth_per_direction) == Approx(7 * 76.8));
}

TEST_CASE("absurd figures on a sheet are refused naming file, field and the accepted range",
          "[hardware][io]") {
  // Issue 18: 1 B/s, 1 FLOP/s or petabytes passed the loader and aborted `serve` later.
  const fs::path source = kTopologies / "devices" / "h100-sxm.toml";
  std::string sheet;
  {
    std::ifstream in(source);
    sheet.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  struct Case {
    std::string from;
    std::string to;
    std::string expect;  // field and message, after the file:line
  };
  const std::vector<Case> cases = {
      {"bandwidth = \"3.35TB/s\"", "bandwidth = \"1B/s\"",
       ":21: memory.bandwidth: 1 B/s is outside the accepted range [1e+09, 1e+15] B/s"},
      {"bandwidth = \"3.35TB/s\"", "bandwidth = \"5000TB/s\"", "memory.bandwidth: 5e+15 B/s"},
      {"fp32 = \"66.9TFLOPS\"", "fp32 = \"1FLOPS\"",
       "compute.fp32: 1 FLOP/s is outside the accepted range [1e+09, 1e+18] FLOP/s"},
      {"fp8 = \"1978.9TFLOPS\"", "fp8 = \"2000PFLOPS\"", "compute.fp8: 2e+18 FLOP/s"},
      {"total = \"85045477376B\"", "total = \"1000TB\"",
       "memory.total: 1e+15 B is outside the accepted range"},
      {"marketed = \"80GB\"", "marketed = \"100000TB\"", "memory.marketed: 1e+17 B"},
      {"total = \"85045477376B\"", "total = \"1MiB\"", "memory.total: 1.04858e+06 B"},
      {"bandwidth_per_direction = \"450GB/s\"", "bandwidth_per_direction = \"1B/s\"",
       "peer_link.bandwidth_per_direction: 1 B/s"},
      {"bandwidth_per_direction = \"64GB/s\"", "bandwidth_per_direction = \"10000TB/s\"",
       "pcie.bandwidth_per_direction: 1e+16 B/s"},
      // Zero, negative and NaN stay the loader's own "must be positive".
      {"bandwidth = \"3.35TB/s\"", "bandwidth = \"0B/s\"", "memory.bandwidth: must be positive"},
      {"fp16 = \"989.4TFLOPS\"", "fp16 = \"-5TFLOPS\"", "compute.fp16"},
  };
  const fs::path dir = fs::temp_directory_path() / "vramsim_absurd_sheets" / "devices";
  fs::create_directories(dir);
  for (const Case& c : cases) {
    CAPTURE(c.to);
    std::string text = sheet;
    const std::size_t at = text.find(c.from);
    REQUIRE(at != std::string::npos);
    text.replace(at, c.from.size(), c.to);
    const fs::path file = dir / "h100-sxm.toml";
    std::ofstream(file) << text;
    try {
      (void)io::load_device_file(file);
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      const std::string message = e.report().format();
      CAPTURE(message);
      CHECK(message.find(file.string()) != std::string::npos);
      CHECK(message.find(c.expect) != std::string::npos);
    }
  }
}
