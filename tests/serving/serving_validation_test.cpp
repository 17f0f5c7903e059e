// The serving simulation against closed forms and trace facts, with the real model zoo, device
// sheets and traces: a lone request's TTFT equals the roofline's prefill time; with an unbounded
// cache the prefix hit rate equals the trace's theoretical block reuse; KV invariants hold at
// every step under pressure; the prefix-aware router keeps shared prefixes together.
#include "sim/serving/serving_simulation.hpp"

#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/serving/roofline_time_model.hpp"
#include "sim/serving/routers/builtin_routers.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"
#include "sim/serving/traces/azure_conv_fit.hpp"
#include "sim/serving/traces/mooncake_trace.hpp"
#include "sim/serving/traces/trace_factory.hpp"
#include "tests/catch.hpp"
#include "tests/serving/serving_test_support.hpp"

#include <filesystem>
#include <unordered_set>

namespace vramsim::serving {
namespace {

using testing::KeepAll;
using testing::record;
using testing::small_setup;
using testing::VectorTrace;

const std::filesystem::path kRoot(VRAMSIM_SOURCE_ROOT);
const std::filesystem::path kShared(VRAMSIM_SHARED_DATA);

struct World {
  World()
      : llama(model::load_model("meta-llama/Llama-3.1-8B", kRoot / "scenarios" / "models")),
        h100(io::find_device("h100-sxm", kRoot / "topologies")),
        model(llama, h100, model::Parallelism{}, model::WeightFormat{}, DType::kBf16) {
    register_builtin_schedulers(schedulers);
    register_builtin_routers(routers);
  }
  ServingResult run(std::vector<TraceRecord> records, const ServingSetup& setup,
                    KeepAll* keep = nullptr) const {
    VectorTrace trace(std::move(records));
    return simulate_serving(trace, setup, model, schedulers, routers, keep);
  }
  model::ModelSpec llama;
  hardware::DeviceSpec h100;
  RooflineTimeModel model;
  SchedulerRegistry schedulers;
  RouterRegistry routers;
};

const World& world() {
  static const World w;
  return w;
}

ServingSetup h100_setup(std::int64_t num_blocks) {
  ServingSetup s = small_setup(num_blocks);
  s.replica.limits.max_num_seqs = 1024;
  s.replica.limits.max_num_batched_tokens = 8192;
  s.replica.check_kv_invariants = true;
  return s;
}

TEST_CASE("a request alone has TTFT equal to the cost model's prefill time", "[serving][validation]") {
  const World& w = world();
  KeepAll keep;
  w.run({record(1.0, 3000, 50)}, h100_setup(10000), &keep);
  REQUIRE(keep.requests.size() == 1);
  BatchShape prefill;
  prefill.prefills.push_back({3000, 0});
  const Duration expected = w.model.step_time(prefill).total;
  CHECK((keep.requests[0].first_token - keep.requests[0].arrival) == expected);
  // Then 49 decode steps, each over the growing context.
  Duration decode_total = Duration::zero();
  for (std::int64_t i = 0; i < 49; ++i) {
    BatchShape d;
    d.num_decodes = 1;
    d.decode_context_tokens = 3000 + i + 1;
    decode_total += w.model.step_time(d).total;
  }
  CHECK((keep.requests[0].finish - keep.requests[0].first_token) == decode_total);
}

// The theoretical reuse of a trace: for each request in order, the leading KV blocks whose
// content hash an earlier request already produced (capped, as vLLM does, so one prompt token
// is always computed), over all prompt tokens.
double theoretical_reuse(const std::vector<TraceRecord>& records, std::int64_t block_size) {
  std::unordered_set<BlockHash> seen;
  std::int64_t hits = 0;
  std::int64_t queried = 0;
  for (const TraceRecord& r : records) {
    const std::vector<BlockHash> hashes = prefix_block_hashes(r, block_size);
    const std::int64_t max_hit_blocks = (r.prompt_tokens - 1) / block_size;
    std::int64_t n = 0;
    while (n < static_cast<std::int64_t>(hashes.size()) && n < max_hit_blocks &&
           seen.count(hashes[static_cast<std::size_t>(n)]) > 0) {
      ++n;
    }
    hits += n * block_size;
    queried += r.prompt_tokens;
    seen.insert(hashes.begin(), hashes.end());
  }
  return static_cast<double>(hits) / static_cast<double>(queried);
}

TEST_CASE("with an unbounded cache the prefix hit rate equals the trace's theoretical reuse",
          "[serving][validation][kv]") {
  // The first 400 requests of the Mooncake conversation trace (Kimi production traffic with
  // 512-token prefix-block hashes), spaced so that each finishes before the next arrives.
  MooncakeTrace trace((kShared / "traces" / "conversation_trace.jsonl").string(),
                      MalformedRowPolicy::kError);
  std::vector<TraceRecord> records;
  for (int i = 0; i < 400; ++i) {
    auto r = trace.next();
    REQUIRE(r.has_value());
    r->arrival = SimTime::zero() + seconds(100 * std::int64_t{i});
    r->output_tokens = std::min<std::int64_t>(r->output_tokens, 64);
    records.push_back(*r);
  }
  const double expected = theoretical_reuse(records, 16);
  REQUIRE(expected > 0.05);  // the trace does share prefixes

  ServingSetup setup = h100_setup(2'000'000);  // never evicts
  setup.replica.kv.enable_prefix_caching = true;
  setup.replica.check_kv_invariants = false;  // O(blocks) per step is too slow at 2M blocks
  const ServingResult res = world().run(records, setup);
  CHECK(res.num_evictions == 0);
  CHECK(res.prefix_hit_rate() == Approx(expected).epsilon(1e-12));
}

TEST_CASE("blocks used never exceed capacity and free + used = total under heavy preemption",
          "[serving][validation][kv]") {
  for (const bool prefix : {false, true}) {
    for (const PreemptionMode mode : {PreemptionMode::kRecompute, PreemptionMode::kSwap}) {
      ServingSetup setup = h100_setup(400);
      setup.replica.kv.enable_prefix_caching = prefix;
      setup.replica.limits.preemption = mode;
      setup.replica.kv.num_host_blocks = 300;
      // 300 Azure-conversation-shaped requests arriving 8x faster than the trace: far more
      // than 400 blocks (6,400 tokens) of KV can hold.
      TraceSpec spec = azure_conv_synthetic(300, 5);
      spec.synthetic.arrivals.rate_per_s *= 8.0;
      auto trace = open_trace(spec);
      const ServingResult res = simulate_serving(*trace, setup, world().model, world().schedulers,
                                                 world().routers, nullptr);
      CHECK(res.metrics.num_finished + res.metrics.num_rejected == 300);
      CHECK(res.kv_peak_blocks <= 400);
      CHECK(res.num_preemptions > 0);
    }
  }
}

TEST_CASE("the prefix-aware router keeps shared prefixes on one replica and hits more",
          "[serving][router]") {
  SyntheticSpec s;
  s.arrivals = {ArrivalProcess::kPoisson, 40.0, 1.0};
  s.prompt = FixedLength{2048};
  s.output = FixedLength{32};
  s.num_requests = 800;
  s.shared_prefix = {8, 1536, PrefixGroupChoice::kUniform, 1.0};
  s.seed = 3;
  TraceSpec spec;
  spec.kind = TraceKind::kSynthetic;
  spec.synthetic = s;
  ServingSetup setup = h100_setup(3000);
  setup.num_replicas = 4;
  setup.replica.kv.enable_prefix_caching = true;
  setup.replica.check_kv_invariants = false;
  const auto hit_rate = [&](const char* router) {
    setup.router = router;
    auto trace = open_trace(spec);
    return simulate_serving(*trace, setup, world().model, world().schedulers, world().routers,
                            nullptr)
        .prefix_hit_rate();
  };
  const double aware = hit_rate("prefix-aware");
  const double rr = hit_rate("round-robin");
  CHECK(aware > rr);
  CHECK(aware > 0.7);  // 1536 of 2048 prompt tokens are shared after each group's first
}

}  // namespace
}  // namespace vramsim::serving
