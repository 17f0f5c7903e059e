// Issue 18, crashes and hangs: arrivals past the simulator's clock and bursts past the requests
// it holds in memory are refused as input (ConfigError naming the setting), and the KV cache
// manager's memory follows the blocks a run uses, not the size of the pool.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/serving/kv_cache_manager.hpp"
#include "sim/serving/routers/builtin_routers.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"
#include "sim/serving/serving_simulation.hpp"
#include "sim/serving/traces/synthetic_trace.hpp"
#include "sim/serving/traces/trace_transforms.hpp"
#include "tests/catch.hpp"
#include "tests/serving/serving_test_support.hpp"

namespace vramsim::serving {
namespace {

using testing::LinearTimeModel;
using testing::record;
using testing::small_setup;
using testing::VectorTrace;

const LinearTimeModel kModel(milliseconds(1), microseconds(10));

ServingResult replay(TraceSource& trace, const ServingSetup& setup) {
  const testing::BuiltinRegistries& reg = testing::builtin_registries();
  return simulate_serving(trace, setup, kModel, reg.schedulers, reg.routers, nullptr);
}

/// The formatted problems of the ConfigError that `f` throws ("" when it does not throw).
template <typename F>
std::string config_error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return "";
}

SyntheticSpec poisson(double rate, std::int64_t n) {
  SyntheticSpec s;
  s.arrivals.process = ArrivalProcess::kPoisson;
  s.arrivals.rate_per_s = rate;
  s.num_requests = n;
  s.prompt = FixedLength{8};
  s.output = FixedLength{2};
  return s;
}

std::string validation_of(const SyntheticSpec& s) {
  ValidationReport report;
  s.validate(report, "workload");
  return report.format();
}

Request request(RequestId id, std::int64_t prompt, std::int64_t output) {
  Request r;
  r.id = id;
  r.uid = static_cast<std::uint64_t>(id) * 977;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

}  // namespace

TEST_CASE("a synthetic stream whose mean span passes the clock is refused, naming workload.rate",
          "[serving][limits]") {
  struct Case {
    const char* name;
    double rate;
    std::int64_t n;
  };
  const std::vector<Case> cases = {
      {"rate 1e-300, 3 requests", 1e-300, 3},
      {"rate 1e-9, 100 requests: 1e11 s", 1e-9, 100},
      {"rate 1e-6, a million requests: 1e12 s", 1e-6, 1'000'000},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK_THAT(validation_of(poisson(c.rate, c.n)),
               Catch::Contains("workload.rate") &&
                   Catch::Contains("more than the simulator's clock holds"));
  }
  // A single request never waits for a gap; a burst has none.
  CHECK(validation_of(poisson(1e-300, 1)).empty());
}

TEST_CASE("a draw past the clock in a stream that validated is refused by next()",
          "[serving][limits]") {
  // 10^4 gaps of mean 1e5 s: a mean span of exactly the clock's 1e9 s (accepted), with a
  // standard deviation of 1e7 s, so about half of the seeds draw past it.
  int refused = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    SyntheticSpec s = poisson(1e-5, 10'001);
    s.seed = seed;
    REQUIRE(validation_of(s).empty());
    SyntheticTrace trace(s);
    const std::string e = config_error_of([&] {
      while (auto r = trace.next()) REQUIRE(r->arrival.nanoseconds() <= kMaxArrivalNs);
    });
    if (e.empty()) continue;
    ++refused;
    CHECK_THAT(e, Catch::Contains("workload.rate") && Catch::Contains("--rate 1e-05") &&
                      Catch::Contains("past the simulator's clock"));
  }
  CHECK(refused > 0);
}

TEST_CASE("a duration bounds the synthetic stream before the clock does", "[serving][limits]") {
  SyntheticSpec s = poisson(1e-300, 5);
  s.duration = Duration::from_seconds(10.0);
  // The mean span is capped by the duration: accepted, and the stream ends after one request.
  REQUIRE(validation_of(s).empty());
  SyntheticTrace trace(s);
  CHECK(trace.next().has_value());
  CHECK_FALSE(trace.next().has_value());
  s.duration = Duration::from_seconds(2e9);
  CHECK_THAT(validation_of(s), Catch::Contains("workload.duration") &&
                                   Catch::Contains("must be at most 1e+09 s"));
}

TEST_CASE("a time scale that puts arrivals past the clock is refused, naming --time-scale",
          "[serving][limits]") {
  TraceTransforms t;
  t.time_scale = 1e-12;
  auto source = std::make_unique<VectorTrace>(
      std::vector<TraceRecord>{record(0.0, 8, 2), record(10.0, 8, 2)});
  TransformedTrace trace(std::move(source), t);
  const std::string e = config_error_of([&] {
    while (trace.next()) {
    }
  });
  CHECK_THAT(e, Catch::Contains("workload.time_scale") && Catch::Contains("--time-scale 1e-12") &&
                    Catch::Contains("past the simulator's clock"));
}

TEST_CASE("a trace timestamp past the clock is refused by the simulation, naming the trace",
          "[serving][limits]") {
  TraceRecord late = record(0.0, 8, 2);
  late.arrival = SimTime::from_nanoseconds(kMaxArrivalNs + 1);
  late.line = 3;
  VectorTrace trace({record(0.0, 8, 2), late});
  const std::string e = config_error_of([&] { (void)replay(trace, small_setup(100)); });
  CHECK_THAT(e, Catch::Contains("trace") && Catch::Contains("line 3") &&
                    Catch::Contains("past the simulator's clock"));
  // At the limit itself the run goes through.
  TraceRecord edge = late;
  edge.arrival = SimTime::from_nanoseconds(kMaxArrivalNs);
  VectorTrace ok({record(0.0, 8, 2), edge});
  CHECK(replay(ok, small_setup(100)).metrics.num_finished == 2);
}

TEST_CASE("more requests in the system at once than the limit is refused, naming the limit",
          "[serving][limits]") {
  std::vector<TraceRecord> burst;
  for (int i = 0; i < 50; ++i) burst.push_back(record(0.0, 8, 2));
  ServingSetup setup = small_setup(1000);
  setup.max_requests_in_system = 20;
  VectorTrace trace(burst);
  const std::string e = config_error_of([&] { (void)replay(trace, setup); });
  CHECK_THAT(e, Catch::Contains("21 requests are in the system at once") &&
                    Catch::Contains("(20;") && Catch::Contains("--max-requests-in-system") &&
                    Catch::Contains("serving.max_requests_in_system"));
  // Spread out, the same 50 requests never have 20 in the system: the limit is not a count.
  std::vector<TraceRecord> spread;
  for (int i = 0; i < 50; ++i) spread.push_back(record(0.1 * i, 8, 2));
  VectorTrace calm(spread);
  CHECK(replay(calm, setup).metrics.num_finished == 50);
}

TEST_CASE("a pool of 2^33 blocks costs only the blocks a run fills", "[serving][kv][limits]") {
  for (const bool caching : {false, true}) {
    CAPTURE(caching);
    KvCacheConfig c;
    c.num_blocks = std::int64_t{1} << 33;  // 2^33 x 24 B of eager metadata would be 192 GiB
    c.block_size = 16;
    c.enable_prefix_caching = caching;
    KvCacheManager kv(c);
    CHECK(kv.num_free_blocks() == c.num_blocks);
    Request a = request(1, 100, 10);
    Request b = request(2, 40, 10);
    REQUIRE(kv.allocate_slots(a, 100));
    REQUIRE(kv.allocate_slots(b, 40));
    CHECK(kv.num_used_blocks() == 7 + 3);
    CHECK(kv.num_free_blocks() == c.num_blocks - 10);
    // Fresh blocks are handed out in id order, as from the eager queue 0, 1, ..., N-1.
    CHECK(kv.block_table(1) == std::vector<BlockId>{0, 1, 2, 3, 4, 5, 6});
    CHECK(kv.block_table(2) == std::vector<BlockId>{7, 8, 9});
    kv.free(a);
    CHECK(kv.num_free_blocks() == c.num_blocks - 3);
    // A fresh block has no metadata yet: no reference, no hash.
    CHECK(kv.ref_count(1 << 30) == 0);
    CHECK_FALSE(kv.is_cached(1 << 30));
    Request d = request(3, 16, 4);
    REQUIRE(kv.allocate_slots(d, 16));
    // Caching off: the freed blocks come back first (pushed at the head, the last one on top);
    // on: the fresh range is ahead of them in the queue (freed blocks join the tail).
    CHECK(kv.block_table(3) == std::vector<BlockId>{caching ? 10 : 6});
    kv.check_invariants();
  }
}

TEST_CASE("the prefix-cache table grows with its entries and keeps the oldest copy first",
          "[serving][kv][limits]") {
  KvCacheConfig c;
  c.num_blocks = 4096;
  c.block_size = 4;
  c.enable_prefix_caching = true;
  KvCacheManager kv(c);
  // Requests with the same shared-prefix hashes have the same content: each registers its
  // blocks again (no de-duplication, as in vLLM), over many table doublings (16 slots at first).
  std::vector<BlockHash> prefix(16);
  for (std::size_t i = 0; i < prefix.size(); ++i) prefix[i] = 0xabc0 + i;
  std::vector<Request> same;
  for (RequestId id = 1; id <= 60; ++id) {
    Request r = request(id, 64, 4);
    r.prefix_hashes = prefix;
    same.push_back(r);
  }
  for (Request& r : same) REQUIRE(kv.allocate_slots(r, 64));
  kv.check_invariants();
  CHECK(kv.num_cached_blocks() == 60 * 16);
  // A newcomer with that content finds all of its leading blocks (its last token recomputed),
  // in the first request's blocks: the oldest copies.
  Request probe = request(99, 64, 4);
  probe.prefix_hashes = prefix;
  CHECK(kv.cached_prefix_tokens(probe) == 60);
  REQUIRE(kv.allocate_slots(probe, 4, 60));
  const std::vector<BlockId> first = kv.block_table(1);
  const std::vector<BlockId> got = kv.block_table(99);
  CHECK(std::vector<BlockId>(got.begin(), got.begin() + 15) ==
        std::vector<BlockId>(first.begin(), first.begin() + 15));
  kv.check_invariants();
}

}  // namespace vramsim::serving
