// The `vllm-v0` scheduler (sim/serving/schedulers/vllm_v0_scheduler.cpp), vLLM V0's
// _schedule_default and _schedule_chunked_prefill, on tiny pools worked by hand: each step is
// planned by the scheduler and then applied here as the replica would (computed tokens
// advance; a step that reaches the end of the sequence samples one token; a request with all
// its output tokens leaves and frees its blocks).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/serving/kv_cache_manager.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"
#include "sim/serving/serving_simulation.hpp"
#include "tests/catch.hpp"
#include "tests/serving/serving_test_support.hpp"

namespace vramsim::serving {
namespace {

/// One replica's scheduler state, stepped by hand.
class World {
 public:
  World(std::int64_t num_blocks, std::int64_t block_size, SchedulerLimits limits)
      : kv_(make_config(num_blocks, block_size)), limits_(limits),
        scheduler_(make_vllm_v0_scheduler(limits_)) {}

  Request& add(std::int64_t prompt, std::int64_t output) {
    auto r = std::make_unique<Request>();
    r->id = static_cast<RequestId>(requests_.size());
    r->uid = static_cast<std::uint64_t>(r->id) + 1;
    r->prompt_tokens = prompt;
    r->output_tokens = output;
    requests_.push_back(std::move(r));
    queues_.waiting.push_back(requests_.back().get());
    return *requests_.back();
  }

  /// Plans one step and applies it; returns the plan as "id:tokens" items.
  std::vector<std::string> step() {
    plan_.clear();
    SchedulerContext ctx(queues_, kv_, limits_, plan_);
    scheduler_->schedule(ctx);
    std::vector<std::string> items;
    for (const ScheduledItem& it : plan_.items) {
      items.push_back(std::to_string(it.request->id) + ":" + std::to_string(it.num_new_tokens));
    }
    for (const ScheduledItem& it : plan_.items) {
      Request& r = *it.request;
      r.num_computed_tokens += it.num_new_tokens;
      if (r.num_computed_tokens < r.num_tokens()) continue;  // a prompt chunk
      ++r.num_generated;
      if (r.num_generated == r.output_tokens) {
        r.state = RequestState::kFinished;
        kv_.free(r);
        auto& run = queues_.running;
        run.erase(std::find(run.begin(), run.end(), &r));
      }
    }
    return items;
  }

  const StepPlan& plan() const { return plan_; }
  const KvCacheManager& kv() const { return kv_; }
  const ReplicaQueues& queues() const { return queues_; }

 private:
  static KvCacheConfig make_config(std::int64_t num_blocks, std::int64_t block_size) {
    KvCacheConfig c;
    c.num_blocks = num_blocks;
    c.block_size = block_size;
    c.bytes_per_block = Bytes(1 << 20);
    return c;
  }

  KvCacheManager kv_;
  SchedulerLimits limits_;
  std::unique_ptr<BatchScheduler> scheduler_;
  ReplicaQueues queues_;
  StepPlan plan_;
  std::vector<std::unique_ptr<Request>> requests_;
};

SchedulerLimits limits(bool chunked, std::int64_t budget, std::int64_t watermark_blocks = 0) {
  SchedulerLimits l;
  l.enable_chunked_prefill = chunked;
  l.max_num_batched_tokens = budget;
  l.max_num_seqs = 256;
  l.watermark_blocks = watermark_blocks;
  return l;
}

using Items = std::vector<std::string>;

}  // namespace

TEST_CASE("vllm-v0 without chunked prefill runs prefill-only steps, then decode-only steps",
          "[serving][scheduler][vllm_v0]") {
  World w(64, 16, limits(false, 2048));
  w.add(100, 3);  // id 0
  w.add(50, 3);   // id 1
  CHECK(w.step() == Items{"0:100", "1:50"});  // both prompts whole, no decode
  CHECK(w.step() == Items{"0:1", "1:1"});
  w.add(30, 3);  // id 2 arrives: its prefill runs alone, the decodes wait a step
  CHECK(w.step() == Items{"2:30"});
  CHECK(w.step() == Items{"0:1", "1:1", "2:1"});
  CHECK(w.queues().running.size() == 1);  // 0 and 1 are done (3 tokens), 2 decodes once more
}

TEST_CASE("vllm-v0 admits whole prompts in FCFS order while they fit the token budget together",
          "[serving][scheduler][vllm_v0]") {
  World w(64, 16, limits(false, 128));
  w.add(100, 2);  // id 0
  w.add(50, 2);   // id 1: 100 + 50 > 128, and FCFS keeps 2 behind it
  w.add(10, 2);   // id 2
  CHECK(w.step() == Items{"0:100"});
  CHECK(w.step() == Items{"1:50", "2:10"});  // prefills again: 0's decode waits
  CHECK(w.step() == Items{"0:1", "1:1", "2:1"});
}

TEST_CASE("vllm-v0 with chunked prefill mixes decodes and a chunk of a new prompt in one step, "
          "holding the whole prompt's blocks from admission",
          "[serving][scheduler][vllm_v0]") {
  World w(64, 16, limits(true, 64));
  w.add(40, 3);   // id 0
  w.add(100, 2);  // id 1
  CHECK(w.step() == Items{"0:40", "1:24"});
  // V0's block manager allocates all 100 prompt tokens at admission: 7 blocks, not 2.
  CHECK(w.kv().num_blocks_of(1) == 7);
  CHECK(w.step() == Items{"0:1", "1:63"});  // the decode first, then the chunk up to 64
  CHECK(w.step() == Items{"0:1", "1:13"});  // 1's last 13 prompt tokens
  CHECK(w.step() == Items{"1:1"});          // 0 finished after 3 tokens
}

TEST_CASE("vllm-v0 keeps the block watermark free at admission",
          "[serving][scheduler][vllm_v0]") {
  // 200 blocks: int(0.01 * 200) = 2 watermark blocks.
  REQUIRE(vllm_v0_watermark_blocks(200) == 2);
  REQUIRE(vllm_v0_watermark_blocks(199) == 1);
  SECTION("198 blocks leave 2 free: admitted") {
    World w(200, 16, limits(false, 4096, 2));
    w.add(198 * 16, 1);
    CHECK(w.step() == Items{"0:3168"});
  }
  SECTION("199 blocks would leave 1 free: not admitted, nothing runs") {
    World w(200, 16, limits(false, 4096, 2));
    w.add(199 * 16, 1);
    CHECK(w.step().empty());
    CHECK(w.queues().waiting.size() == 1);
  }
  SECTION("without the watermark (V1's 0) it is admitted") {
    World w(200, 16, limits(false, 4096, 0));
    w.add(199 * 16, 1);
    CHECK(w.step() == Items{"0:3184"});
  }
}

TEST_CASE("vllm-v0 preempts the newest running request by recompute and readmits it whole "
          "only when its blocks and the watermark fit",
          "[serving][scheduler][vllm_v0]") {
  // 8 blocks of 4 tokens, no watermark. A and B: 8-token prompts (2 blocks each), 20 outputs.
  World w(8, 4, limits(false, 2048));
  Request& a = w.add(8, 20);
  Request& b = w.add(8, 20);
  CHECK(w.step() == Items{"0:8", "1:8"});
  // Decodes: each takes its 3rd block at token 9 and its 4th at token 13; all 8 are held once
  // both have 16 tokens in the cache (after 8 decode steps).
  for (int i = 0; i < 8; ++i) CHECK(w.step() == Items{"0:1", "1:1"});
  CHECK(w.kv().num_free_blocks() == 0);
  // A's 17th token needs a 5th block: B, the newest, is preempted (its 4 blocks freed).
  CHECK(w.step() == Items{"0:1"});
  CHECK(w.plan().num_preempted == 1);
  CHECK(b.state == RequestState::kWaiting);
  CHECK(b.num_computed_tokens == 0);
  CHECK(w.queues().waiting.front() == &b);
  // B would recompute 8 + 9 = 17 tokens (5 blocks) and 3 are free: it waits, A decodes.
  CHECK(w.step() == Items{"0:1"});
  CHECK(a.num_generated == 11);
}

TEST_CASE("vllm-v0 with chunked prefill admits new prefills in a step that preempted, its "
          "victims sitting that admission out", "[serving][scheduler][vllm_v0]") {
  // 8 blocks of 4 tokens, no watermark. A: 8-token prompt (2 blocks), B: 16 (4 blocks).
  World w(8, 4, limits(true, 64));
  Request& b = [&]() -> Request& {
    w.add(8, 30);          // id 0
    return w.add(16, 30);  // id 1
  }();
  CHECK(w.step() == Items{"0:8", "1:16"});
  // A's 9th and B's 17th token each take a block: all 8 are held; no new block for 3 steps.
  for (int i = 0; i < 4; ++i) CHECK(w.step() == Items{"0:1", "1:1"});
  CHECK(w.kv().num_free_blocks() == 0);
  w.add(4, 5);  // C (id 2) arrives
  // A's 13th token needs a 4th block: B is preempted (5 blocks freed, 4 left after A's). V0
  // puts B back at the head of waiting only after admitting new prefills, so C (1 block) is
  // admitted in this step instead of waiting behind B (B's 21 tokens would need 6 blocks).
  CHECK(w.step() == Items{"0:1", "2:4"});
  CHECK(w.plan().num_preempted == 1);
  CHECK(w.queues().waiting.size() == 1);
  CHECK(w.queues().waiting.front() == &b);
}

TEST_CASE("vllm-v0 rejects at arrival a request whose blocks exceed the cache less the "
          "watermark", "[serving][scheduler][vllm_v0]") {
  // 100 blocks of 16 tokens; the request's prompt + output - 1 = 1594 tokens need 100 blocks.
  const auto run = [](std::int64_t watermark_blocks) {
    ServingSetup setup = testing::small_setup(100);
    setup.scheduler = "vllm-v0";
    setup.replica.limits.enable_chunked_prefill = false;
    setup.replica.limits.max_num_batched_tokens = 2048;
    setup.replica.limits.watermark_blocks = watermark_blocks;
    testing::VectorTrace trace({testing::record(0.0, 1500, 95)});
    const testing::LinearTimeModel model(milliseconds(1), microseconds(10));
    const testing::BuiltinRegistries& reg = testing::builtin_registries();
    return simulate_serving(trace, setup, model, reg.schedulers, reg.routers, nullptr);
  };
  CHECK(run(1).metrics.num_rejected == 1);  // int(0.01 * 100) = 1: 99 admissible blocks
  const ServingResult without = run(0);
  CHECK(without.metrics.num_rejected == 0);
  CHECK(without.metrics.num_finished == 1);
}

}  // namespace vramsim::serving
