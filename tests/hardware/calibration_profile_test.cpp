#include "sim/hardware/calibration_profile.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/comm/collective.hpp"
#include "tests/catch.hpp"
#include "tests/hardware/calibration_fixture.hpp"

using namespace vramsim;
using namespace vramsim::calibration;
using nlohmann::json;

namespace {

json fixture_json() {
  std::ifstream in(testing::fixture_profile_path());
  return json::parse(in);
}

bool has_problem(const ValidationReport& r, const std::string& field, const std::string& text) {
  return std::any_of(r.problems().begin(), r.problems().end(), [&](const Problem& p) {
    return p.field == field && p.message.find(text) != std::string::npos &&
           p.where.file == "bad.json";
  });
}

}  // namespace

TEST_CASE("the fixture profile loads, names its device and says it is synthetic",
          "[hardware][calibration]") {
  const CalibrationProfile& p = testing::fixture_profile();
  CHECK(p.device_id == "h100-sxm");
  CHECK(p.synthetic);
  CHECK(p.copies.size() == 36);
  CHECK(p.gemms.size() == 66);
  CHECK(p.decode_attention.size() == 25);
  CHECK(p.prefill_attention.size() == 5);
  CHECK(p.collectives.size() == 196);
  CHECK(p.memory.cuda_context_bytes == 557842432);
  CHECK(p.gemms[0].check == CheckOutcome::kPassed);
}

TEST_CASE("a profile written and read back is unchanged", "[hardware][calibration]") {
  const CalibrationProfile& p = testing::fixture_profile();
  const auto path = std::filesystem::temp_directory_path() / "vramsim_profile_roundtrip.json";
  save_calibration_profile(p, path);
  const CalibrationProfile back = load_calibration_profile(path);
  CHECK(to_json(back) == to_json(p));
  CHECK(back.source_file == path.string());
  std::filesystem::remove(path);
}

TEST_CASE("a missing field is reported with its path and the file", "[hardware][calibration]") {
  json j = fixture_json();
  j["gemm"][2].erase("m");
  j["identity"].erase("driver_version");
  ValidationReport r;
  profile_from_json(j, "bad.json", r);
  CHECK(r.problems().size() == 2);
  CHECK(has_problem(r, "gemm[2].m", "missing"));
  CHECK(has_problem(r, "identity.driver_version", "missing"));
}

TEST_CASE("wrong types, unknown names and unknown keys are each reported",
          "[hardware][calibration]") {
  json j = fixture_json();
  j["copy"][1]["kind"] = "sideways";
  j["collectives"][0]["op"] = "all-to-none";
  j["gemm"][0]["n"] = "4096";
  j["decode_attention"][3]["timing"]["median_s"] = true;
  j["colour"] = "blue";
  ValidationReport r;
  profile_from_json(j, "bad.json", r);
  CHECK(r.problems().size() == 5);
  CHECK(has_problem(r, "copy[1].kind", "unknown value 'sideways'"));
  CHECK(has_problem(r, "collectives[0].op", "unknown value 'all-to-none'"));
  CHECK(has_problem(r, "gemm[0].n", "must be an integer"));
  CHECK(has_problem(r, "decode_attention[3].timing.median_s", "must be a number"));
  CHECK(has_problem(r, "colour", "unknown key"));
}

TEST_CASE("values out of range are reported by field", "[hardware][calibration]") {
  json j = fixture_json();
  j["gemm"][4]["dtype"] = "fp4";
  j["gemm"][5]["k"] = 0;
  j["copy"][0]["timing"]["min_s"] = 1.0;  // above the median
  j["collectives"][7]["timing"]["num_repetitions"] = 0;
  j["decode_attention"][0]["num_q_heads"] = 30;  // not a multiple of 8 KV heads
  j["memory"]["free_bytes"] = j["memory"]["total_bytes"].get<std::int64_t>() + 1;
  ValidationReport r;
  profile_from_json(j, "bad.json", r);
  CHECK(r.problems().size() == 6);
  CHECK(has_problem(r, "gemm[4].dtype", "unknown dtype 'fp4'"));
  CHECK(has_problem(r, "gemm[5].k", "must be positive"));
  CHECK(has_problem(r, "copy[0].timing", "min_s <= q1_s"));
  CHECK(has_problem(r, "collectives[7].timing.num_repetitions", "at least 1"));
  CHECK(has_problem(r, "decode_attention[0].num_q_heads", "multiple of num_kv_heads"));
  CHECK(has_problem(r, "memory.free_bytes", "exceeds total_bytes"));
}

TEST_CASE("a file that is missing or not JSON is a ConfigError naming it",
          "[hardware][calibration]") {
  CHECK_THROWS_AS(load_calibration_profile("/nonexistent/profile.json"), ConfigError);
  const auto path = std::filesystem::temp_directory_path() / "vramsim_not_json.json";
  std::ofstream(path) << "{ not json";
  try {
    load_calibration_profile(path);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    CHECK(e.report().problems()[0].where.file == path.string());
    CHECK(e.report().problems()[0].message.find("not valid JSON") != std::string::npos);
  }
  // Regression (bad input catalogue): 1e400 escaped as nlohmann's out_of_range.
  std::ofstream(path) << R"({"format": "vramsim-calibration-profile", "format_version": 1e400})";
  CHECK_THROWS_WITH(load_calibration_profile(path),
                    Catch::Contains("vramsim_not_json.json") &&
                        Catch::Contains("number overflow parsing '1e400'"));
  std::filesystem::remove(path);
}

TEST_CASE("bus bandwidth follows nccl-tests' formulas", "[hardware][calibration]") {
  const auto ops = {std::pair{CollectiveOp::kAllReduce, comm::Collective::kAllReduce},
                    std::pair{CollectiveOp::kAllGather, comm::Collective::kAllGather},
                    std::pair{CollectiveOp::kReduceScatter, comm::Collective::kReduceScatter},
                    std::pair{CollectiveOp::kBroadcast, comm::Collective::kBroadcast},
                    std::pair{CollectiveOp::kSendRecv, comm::Collective::kSendRecv}};
  for (const auto& [op, coll] : ops) {
    for (int n = 1; n <= 16; ++n) {
      CHECK(bus_bandwidth_factor(op, n) == comm::bus_bandwidth_factor(coll, n));
    }
  }
  // 1 GiB all-reduce over 8 ranks in 10 ms: algbw 107.37 GB/s, busbw x 7/4.
  const std::int64_t gib = std::int64_t{1} << 30;
  CHECK(algorithm_bandwidth(gib, 0.01) == Approx(107374182400.0));
  CHECK(bus_bandwidth(CollectiveOp::kAllReduce, 8, gib, 0.01) == Approx(107374182400.0 * 1.75));
  CHECK(bus_bandwidth(CollectiveOp::kAllGather, 4, gib, 0.01) == Approx(107374182400.0 * 0.75));
  CHECK(bus_bandwidth(CollectiveOp::kAllReduce, 1, gib, 0.01) == 0.0);
  CHECK(algorithm_bandwidth(gib, 0.0) == 0.0);
}

TEST_CASE("absurd calibration numbers are refused by field, with the accepted range",
          "[hardware][calibration]") {
  // Each edit alone makes the fixture absurd: a unit slip or a corrupted file, whose derived
  // times would not fit the nanosecond clock (issue 18).
  struct Case {
    const char* name;
    void (*edit)(json&);
    const char* field;
    const char* text;
  };
  const std::vector<Case> cases = {
      {"a median of a million seconds",
       [](json& j) {
         j["gemm"][0]["timing"]["median_s"] = 1e6;
         j["gemm"][0]["timing"]["q3_s"] = 1e6;
         j["gemm"][0]["timing"]["max_s"] = 1e6;
       },
       "gemm[0].timing.median_s", "outside the accepted range [1e-08, 1000] s"},
      {"a median of a femtosecond",
       [](json& j) {
         auto& t = j["copy"][0]["timing"];
         t["min_s"] = t["q1_s"] = t["median_s"] = 1e-15;
       },
       "copy[0].timing.median_s", "outside the accepted range"},
      {"a maximum past the range", [](json& j) { j["collectives"][0]["timing"]["max_s"] = 1e300; },
       "collectives[0].timing.max_s", "over the accepted 1000 s"},
      {"a GEMM faster than an exaFLOP/s",
       [](json& j) {
         j["gemm"][0]["m"] = 1 << 20;
         j["gemm"][0]["n"] = 1 << 20;
         j["gemm"][0]["k"] = 1 << 20;
       },
       "gemm[0].timing.median_s", "FLOP/s: over the accepted 1e+18 FLOP/s"},
      {"a copy faster than a PB/s",
       [](json& j) { j["copy"][0]["bytes"] = std::int64_t{100'000'000'000'000'000}; },
       "copy[0].timing.median_s", "B/s: over the accepted 1e+15 B/s"},
      {"petabytes of device memory",
       [](json& j) {
         j["memory"]["total_bytes"] = std::int64_t{1'000'000'000'000'000};
         j["memory"]["free_bytes"] = std::int64_t{100'000'000'000'000};
       },
       "memory.total_bytes", "over the accepted"},
      {"a CUDA context larger than the device",
       [](json& j) {
         j["memory"]["cuda_context_bytes"] = j["memory"]["total_bytes"].get<std::int64_t>() + 1;
       },
       "memory.cuda_context_bytes", "a CUDA context larger than the device"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    json j = fixture_json();
    c.edit(j);
    ValidationReport r;
    profile_from_json(j, "bad.json", r);
    CAPTURE(r.format());
    CHECK(has_problem(r, c.field, c.text));
  }
  // The fixture itself (timings from 3 us to 56 ms) is inside every range.
  ValidationReport ok;
  profile_from_json(fixture_json(), "bad.json", ok);
  CHECK(ok.ok());
}

TEST_CASE("a folder given as a profile is a ConfigError naming it, not a stream exception",
          "[hardware][calibration]") {
  const auto dir = std::filesystem::temp_directory_path() / "vramsim_profile_folder";
  std::filesystem::create_directories(dir);
  try {
    load_calibration_profile(dir);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 1);
    CHECK(e.report().problems()[0].where.file == dir.string());
    CHECK(e.report().problems()[0].message.find("is a folder") != std::string::npos);
  }
}
