// The rate every serving host copy crosses the host link at (run::host_copy_rate), in each
// direction: a calibration profile's largest pinned copy of that direction, else the device
// sheet's PCIe rate per direction times cost::kPinnedHostToDeviceEfficiency or
// kPinnedDeviceToHostEfficiency; budget and serve report it.
#include "sim/run/host_stream_rate.hpp"

#include <string>

#include "sim/cost/datasheet_constants.hpp"
#include "sim/run/budget_results.hpp"
#include "sim/run/budget_run.hpp"
#include "sim/run/data_root.hpp"
#include "sim/run/serve_options.hpp"
#include "sim/run/serve_results.hpp"
#include "sim/run/serve_run.hpp"
#include "tests/catch.hpp"

namespace vramsim::run {
namespace {

hardware::DeviceSpec gen5_device() {
  hardware::DeviceSpec d;
  d.id = "gen5-card";
  d.pcie.generation = 5;
  d.pcie.bandwidth_per_direction = GBps(64.0);
  return d;
}

calibration::CopyRecord copy(calibration::CopyKind kind, std::int64_t bytes, double median_s) {
  calibration::CopyRecord c;
  c.kind = kind;
  c.bytes = bytes;
  c.timing.median_s = median_s;
  return c;
}

}  // namespace

TEST_CASE("without a profile host copies run at the PCIe rate times the pinned-copy "
          "efficiency of their direction, and say so",
          "[run][cpu-offload]") {
  // 64 GB/s x 0.80 = 51.2 GB/s, each way.
  const HostStreamRate r =
      host_copy_rate(gen5_device(), nullptr, HostCopyDirection::kHostToDevice);
  CHECK(cost::kPinnedHostToDeviceEfficiency == 0.80);
  CHECK(r.rate.bytes_per_second() == Approx(51.2e9).epsilon(1e-12));
  CHECK(r.source == "device sheet gen5-card: PCIe Gen5 x16, 64.0 GB/s per direction x 0.80 "
                    "(pinned host-to-device copies, datasheet_constants.hpp) = 51.2 GB/s");
  const HostStreamRate d =
      host_copy_rate(gen5_device(), nullptr, HostCopyDirection::kDeviceToHost);
  CHECK(cost::kPinnedDeviceToHostEfficiency == 0.80);
  CHECK(d.rate.bytes_per_second() == Approx(51.2e9).epsilon(1e-12));
  CHECK(d.source == "device sheet gen5-card: PCIe Gen5 x16, 64.0 GB/s per direction x 0.80 "
                    "(device-to-host copies into pinned memory, datasheet_constants.hpp) = "
                    "51.2 GB/s");
}

TEST_CASE("a profile's largest pinned host-to-device copy sets the rate and other copies do not",
          "[run][cpu-offload]") {
  using calibration::CopyKind;
  calibration::CalibrationProfile p;
  p.source_file = "h100.json";
  // Pinned H2D: 1 MiB in 50 us (21.0 GB/s, latency-bound) and 256 MiB in 5 ms: 268,435,456 B /
  // 0.005 s = 53.687 GB/s, the one taken. Faster copies of other kinds are ignored, and so is
  // a larger pinned one without a time.
  p.copies = {copy(CopyKind::kHostToDevicePinned, 1 << 20, 50e-6),
              copy(CopyKind::kHostToDevicePinned, 256 << 20, 0.005),
              copy(CopyKind::kHostToDevicePinned, 1 << 30, 0.0),
              copy(CopyKind::kDeviceToHostPinned, 256 << 20, 0.001),
              copy(CopyKind::kHostToDevicePageable, 256 << 20, 0.002),
              copy(CopyKind::kDeviceMemcpy, 256 << 20, 0.0001)};
  const HostStreamRate r = host_copy_rate(gen5_device(), &p, HostCopyDirection::kHostToDevice);
  CHECK(r.rate.bytes_per_second() == Approx(268'435'456 / 0.005).epsilon(1e-12));
  CHECK(r.source == "calibration profile h100.json: h2d-pinned copy of 268435456 B, median "
                    "53.7 GB/s");
  // Device to host: the one d2h-pinned copy, 256 MiB in 1 ms = 268.4 GB/s.
  const HostStreamRate d = host_copy_rate(gen5_device(), &p, HostCopyDirection::kDeviceToHost);
  CHECK(d.rate.bytes_per_second() == Approx(268'435'456 / 0.001).epsilon(1e-12));
  CHECK(d.source == "calibration profile h100.json: d2h-pinned copy of 268435456 B, median "
                    "268.4 GB/s");
  // A profile without pinned H2D copies falls back to the datasheet rate in that direction.
  p.copies.erase(p.copies.begin(), p.copies.begin() + 3);
  CHECK(host_copy_rate(gen5_device(), &p, HostCopyDirection::kHostToDevice)
            .rate.bytes_per_second() == Approx(51.2e9).epsilon(1e-12));
  CHECK(host_copy_rate(gen5_device(), &p, HostCopyDirection::kDeviceToHost)
            .rate.bytes_per_second() == Approx(268'435'456 / 0.001).epsilon(1e-12));
}

TEST_CASE("budget --cpu-offload-gb reports the stream rate and its source, absent without it",
          "[run][budget][cpu-offload]") {
  BudgetRequest req;
  req.model_id = "meta-llama/Llama-3.1-8B";
  req.gpu_id = "rtx-4090";
  req.max_model_len = 8192;
  req.suggest = false;
  req.cpu_offload_gb = 4.0;
  const nlohmann::ordered_json j = budget_json(answer_budget(req, project_root()));
  // rtx-4090: PCIe Gen4 x16, 32 GB/s per direction: 25.6 GB/s.
  CHECK(j["weights_stream_bytes_per_s"].get<double>() == Approx(25.6e9).epsilon(1e-12));
  CHECK(j["weights_stream_source"].get<std::string>().find("device sheet rtx-4090: PCIe Gen4") ==
        0);
  req.cpu_offload_gb = 0.0;
  const nlohmann::ordered_json none = budget_json(answer_budget(req, project_root()));
  CHECK_FALSE(none.contains("weights_stream_bytes_per_s"));
}

TEST_CASE("serve adds the offloaded weights at that rate to every step and names the source",
          "[run][serve][cpu-offload]") {
  ServeAnswer a = prepare_serve(resolve_serve_options(load_serve_scenario_text(
      "seed = 1\n[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"rtx-4090\"\n"
      "[engine]\ncpu_offload_gb = 4\nmax_model_len = 8192\n[workload]\nnum_requests = 2\n",
      "offload.toml")));
  REQUIRE(a.feasible);
  const serving::ReplicaConfig& r = a.config.setup.replica;
  // Every host copy, weights included, at the pinned rates: 32 GB/s x 0.80 each way.
  CHECK(r.host_to_device.bytes_per_second() == Approx(25.6e9).epsilon(1e-12));
  CHECK(r.device_to_host.bytes_per_second() == Approx(25.6e9).epsilon(1e-12));
  simulate_serve(a, nullptr);
  const nlohmann::ordered_json j = serve_json(a);
  const double bytes = j["cpu_offload"]["weights_offloaded_bytes"].get<double>();
  CHECK(bytes > 0.0);
  CHECK(j["cpu_offload"]["stream_bytes_per_s"].get<double>() == Approx(25.6e9).epsilon(1e-12));
  CHECK(j["cpu_offload"]["stream_time_per_step_s"].get<double>() ==
        Approx(bytes / 25.6e9).epsilon(1e-9));
  CHECK(j["cpu_offload"]["stream_rate_source"].get<std::string>().find(
            "device sheet rtx-4090") == 0);
}

}  // namespace vramsim::run
