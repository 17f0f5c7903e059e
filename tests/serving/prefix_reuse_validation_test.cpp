// Prefix caching against the reuse a trace implies (issue 12): replaying every shipped Mooncake
// trace at its own arrival times with a KV pool large enough that nothing is ever evicted, each
// request's prefix-cache hit equals the tokens of its leading 512-token hash blocks that an
// earlier request already produced, after the two rules of vLLM's lookup:
//   * only full KV blocks are cached ("Note that the computed blocks must be full"), so a hit is
//     a whole number of block_size blocks;
//   * "When all tokens hit the cache, we must recompute the last token to obtain logits. Thus,
//     set max_cache_hit_length to prompt_length - 1" (max_cache_hit_length = num_tokens - 1).
// Both: vllm-project/vllm vllm/v1/core/kv_cache_manager.py, KVCacheManager.get_computed_blocks
// (read at commit 003df2961dd8830c317a61f9745ccd557da9fa06).
//
// The expected value is computed here from the raw hash_ids, not through the simulator's block
// hashing (prefix_block_hashes), so that a wrong mapping of 512-token hash blocks onto 16-token
// KV blocks shows as a difference. The rules match, so the comparison is exact, request by request.
//
// NOTE: issue 12 reported 0.527 against 0.646 on the synthetic trace with "about 485k blocks,
// nothing evicted". That pool does evict: keeping all of the trace's KV takes 1,352,229 blocks
// of 16 tokens, and the run evicts about 1.3M cached blocks (LRU). Sized to hold everything, the
// simulator gives the trace's 0.646; the lower figure is the LRU cache's, not a reuse bug. The
// last test checks that figure too: under that pool, each request's hit equals that of an LRU
// cache written here from vLLM's rules.
#include "sim/serving/serving_simulation.hpp"

#include "sim/io/topology_loader.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/serving/roofline_time_model.hpp"
#include "sim/serving/routers/builtin_routers.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"
#include "sim/serving/traces/mooncake_trace.hpp"
#include "tests/catch.hpp"
#include "tests/serving/serving_test_support.hpp"

#include <algorithm>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace vramsim::serving {
namespace {

using testing::KeepAll;
using testing::VectorTrace;

const std::filesystem::path kRoot(VRAMSIM_SOURCE_ROOT);
const std::filesystem::path kShared(VRAMSIM_SHARED_DATA);

constexpr std::int64_t kBlockSize = 16;         // vLLM's default --block-size
constexpr std::int64_t kMaxModelLen = 131'072;  // Llama-3.1-8B's max_position_embeddings

/// Every Mooncake JSONL shipped in the shared traces folder, by name.
std::vector<std::filesystem::path> shipped_mooncake_traces() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(kShared / "traces")) {
    if (e.is_regular_file() && e.path().extension() == ".jsonl") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<TraceRecord> read_trace(const std::filesystem::path& path) {
  MooncakeTrace trace(path.string(), MalformedRowPolicy::kError);  // hash_ids lengths checked
  std::vector<TraceRecord> rows;
  while (auto r = trace.next()) rows.push_back(std::move(*r));
  return rows;
}

/// Tokens of hash block `j` of a prompt of `prompt_tokens` (the last block may be partial).
std::int64_t hash_block_length(std::int64_t prompt_tokens, std::size_t j) {
  return std::min(kMooncakeHashBlockTokens,
                  prompt_tokens - static_cast<std::int64_t>(j) * kMooncakeHashBlockTokens);
}

/// The premise of reading reuse off the ids alone: an id names one prefix, so it always sits at
/// the same position, after the same id, over the same number of tokens. Returns the number of
/// (id, occurrence) pairs that break it.
std::int64_t num_inconsistent_ids(const std::vector<TraceRecord>& rows) {
  struct Where {
    std::size_t position;
    std::uint64_t previous;
    std::int64_t tokens;
  };
  std::unordered_map<std::uint64_t, Where> first;
  std::int64_t bad = 0;
  for (const TraceRecord& r : rows) {
    for (std::size_t j = 0; j < r.hash_ids.size(); ++j) {
      const Where w{j, j == 0 ? ~std::uint64_t{0} : r.hash_ids[j - 1],
                    hash_block_length(r.prompt_tokens, j)};
      const auto [it, inserted] = first.try_emplace(r.hash_ids[j], w);
      if (!inserted && (it->second.position != w.position || it->second.previous != w.previous ||
                        it->second.tokens != w.tokens)) {
        ++bad;
      }
    }
  }
  return bad;
}

struct ImpliedReuse {
  std::map<std::int64_t, std::int64_t> hit_tokens_by_line;  // served requests only
  std::int64_t query_tokens = 0;
  std::int64_t hit_tokens = 0;
  std::int64_t num_rejected = 0;
  /// KV blocks the served requests take from the free queue in all (their blocks minus hits):
  /// a pool at least this large never hands out a block twice, so it never evicts. NOTE: the
  /// test gives exactly this many, so a simulator that allocates one block more than the
  /// requests need (or hits one block less) shows as an eviction.
  std::int64_t num_new_blocks = 0;
};

/// The trace's own reuse: in arrival order, the tokens of each request's leading hash blocks
/// whose ids an earlier served request carried, cut to whole KV blocks and to prompt - 1 tokens
/// (vLLM's two rules above). Requests longer than max_model_len are rejected by the server and
/// neither query nor seed the cache.
ImpliedReuse implied_reuse(const std::vector<TraceRecord>& rows) {
  ImpliedReuse out;
  std::unordered_set<std::uint64_t> seen;
  for (const TraceRecord& r : rows) {
    const std::int64_t total = r.prompt_tokens + r.output_tokens;
    if (total > kMaxModelLen) {
      ++out.num_rejected;
      continue;
    }
    std::int64_t covered = 0;
    for (std::size_t j = 0; j < r.hash_ids.size() && seen.count(r.hash_ids[j]) > 0; ++j) {
      covered += hash_block_length(r.prompt_tokens, j);
    }
    const std::int64_t hit = std::min(covered, r.prompt_tokens - 1) / kBlockSize * kBlockSize;
    out.hit_tokens_by_line[r.line] = hit;
    out.query_tokens += r.prompt_tokens;
    out.hit_tokens += hit;
    // A request holds KV for every token but its last generated one.
    out.num_new_blocks += (total - 1 + kBlockSize - 1) / kBlockSize - hit / kBlockSize;
    seen.insert(r.hash_ids.begin(), r.hash_ids.end());
  }
  return out;
}

/// An LRU prefix cache of `num_blocks` KV blocks written from vLLM's rules, independently of
/// KvCacheManager, for requests served one after another: a request takes its leading cached
/// blocks (the oldest copy of each), draws the rest of its blocks from the least recently freed
/// end, evicting what they held, registers its full prompt blocks (copies too: vLLM does not
/// de-duplicate, block_pool.py BlockHashToBlockMap NOTE #1), and frees its blocks last block
/// first (kv_cache_manager.py free). Block content is named by (hash id, offset in the 512-token
/// hash block), which the ids' prefix property makes a content identity. Returns the hit tokens
/// of each served request by trace line.
std::map<std::int64_t, std::int64_t> lru_reference_hits(const std::vector<TraceRecord>& rows,
                                                        std::int64_t num_blocks) {
  using Content = std::pair<std::uint64_t, std::int64_t>;
  struct ContentHash {
    std::size_t operator()(const Content& c) const {
      return std::hash<std::uint64_t>()(c.first * 1024 + static_cast<std::uint64_t>(c.second));
    }
  };
  std::unordered_map<Content, std::vector<std::int64_t>, ContentHash> copies;  // oldest first
  std::vector<std::optional<Content>> held(static_cast<std::size_t>(num_blocks));
  // The free blocks in the order they were freed, (time freed, block): an entry is stale once
  // its block was taken (is_free false) or freed again later (a newer time).
  std::deque<std::pair<std::uint64_t, std::int64_t>> freed;
  std::vector<std::uint64_t> freed_at(static_cast<std::size_t>(num_blocks));
  std::vector<bool> is_free(static_cast<std::size_t>(num_blocks), true);
  std::int64_t num_free = num_blocks;
  std::uint64_t clock = 0;
  for (std::int64_t b = 0; b < num_blocks; ++b) {
    freed_at[static_cast<std::size_t>(b)] = clock;
    freed.emplace_back(clock++, b);
  }
  const auto stale = [&](const std::pair<std::uint64_t, std::int64_t>& e) {
    const auto b = static_cast<std::size_t>(e.second);
    return !is_free[b] || freed_at[b] != e.first;
  };
  std::map<std::int64_t, std::int64_t> hits_by_line;
  for (const TraceRecord& r : rows) {
    const std::int64_t total = r.prompt_tokens + r.output_tokens;
    if (total > kMaxModelLen) continue;
    const auto content = [&](std::int64_t i) {
      const std::int64_t first = i * kBlockSize;
      return Content{r.hash_ids[static_cast<std::size_t>(first / kMooncakeHashBlockTokens)],
                     first % kMooncakeHashBlockTokens};
    };
    const std::int64_t num_full = r.prompt_tokens / kBlockSize;
    const std::int64_t max_hits = (r.prompt_tokens - 1) / kBlockSize;
    std::vector<std::int64_t> table;
    while (static_cast<std::int64_t>(table.size()) < max_hits) {
      const auto it = copies.find(content(static_cast<std::int64_t>(table.size())));
      if (it == copies.end()) break;
      const std::int64_t b = it->second.front();
      is_free[static_cast<std::size_t>(b)] = false;
      --num_free;
      table.push_back(b);
    }
    hits_by_line[r.line] = static_cast<std::int64_t>(table.size()) * kBlockSize;
    const std::int64_t num_blocks_needed = (total - 1 + kBlockSize - 1) / kBlockSize;
    while (static_cast<std::int64_t>(table.size()) < num_blocks_needed) {
      if (num_free == 0) FAIL("the reference pool cannot hold line " << r.line);
      while (stale(freed.front())) freed.pop_front();
      const std::int64_t b = freed.front().second;
      freed.pop_front();
      is_free[static_cast<std::size_t>(b)] = false;
      --num_free;
      auto& slot = held[static_cast<std::size_t>(b)];
      if (slot) {  // evict
        auto& v = copies.at(*slot);
        v.erase(std::find(v.begin(), v.end(), b));
        if (v.empty()) copies.erase(*slot);
        slot.reset();
      }
      const auto i = static_cast<std::int64_t>(table.size());
      if (i < num_full) {
        slot = content(i);
        copies[*slot].push_back(b);
      }
      table.push_back(b);
    }
    for (auto it = table.rbegin(); it != table.rend(); ++it) {
      freed_at[static_cast<std::size_t>(*it)] = clock;
      is_free[static_cast<std::size_t>(*it)] = true;
      ++num_free;
      freed.emplace_back(clock++, *it);
    }
  }
  return hits_by_line;
}

#if defined(VRAMSIM_SANITIZED)
// Under AddressSanitizer a whole trace takes over the test timeout; the properties below hold
// request by request, so the sanitizer build checks them on each trace's first rows.
constexpr std::size_t kMaxRows = 60;
#else
constexpr std::size_t kMaxRows = std::numeric_limits<std::size_t>::max();
#endif

/// The trace's rows, at most kMaxRows of them; `whole` says whether that is all of them.
std::vector<TraceRecord> rows_of(const std::filesystem::path& path, bool& whole) {
  std::vector<TraceRecord> rows = read_trace(path);
  whole = rows.size() <= kMaxRows;
  if (!whole) rows.resize(kMaxRows);
  return rows;
}

/// Llama-3.1-8B on 8x H200 (TP 8), the configuration of issue 12, with vLLM's H200 limits
/// (max_num_seqs 1024, max_num_batched_tokens 8192, chunked prefill, as `vramsim serve`
/// resolves them) and prefix caching on.
struct H200Tp8 {
  H200Tp8()
      : llama(model::load_model("meta-llama/Llama-3.1-8B", kRoot / "scenarios" / "models")),
        h200(io::find_device("h200", kRoot / "topologies")),
        model(llama, h200, model::Parallelism{8, 1}, model::WeightFormat{}, DType::kBf16) {
    register_builtin_schedulers(schedulers);
    register_builtin_routers(routers);
  }
  ServingSetup setup(std::int64_t num_blocks) const {
    ServingSetup s;
    s.replica.kv.num_blocks = num_blocks;
    s.replica.kv.block_size = kBlockSize;
    s.replica.kv.enable_prefix_caching = true;
    s.replica.kv.bytes_per_block = Bytes(256 * 1024);  // 16 tokens x 16 KiB per H200 at TP 8
    s.replica.limits.max_num_seqs = 1024;
    s.replica.limits.max_num_batched_tokens = 8192;
    s.replica.host_to_device = GBps(25.0);
    s.replica.device_to_host = GBps(25.0);
    s.max_model_len = kMaxModelLen;
    return s;
  }
  model::ModelSpec llama;
  hardware::DeviceSpec h200;
  RooflineTimeModel model;
  SchedulerRegistry schedulers;
  RouterRegistry routers;
};

TEST_CASE("every shipped Mooncake trace is a trace of prefix-block ids", "[serving][validation]") {
  const auto traces = shipped_mooncake_traces();
  // conversation_trace.jsonl and mooncake_synthetic_trace.jsonl (SOURCES.md, section 2 and 4).
  REQUIRE(traces.size() >= 2);
  for (const auto& path : traces) {
    INFO(path.string());
    const std::vector<TraceRecord> rows = read_trace(path);
    REQUIRE(!rows.empty());
    const auto num_with_ids = std::count_if(rows.begin(), rows.end(), [](const TraceRecord& r) {
      return r.hash_block_tokens == kMooncakeHashBlockTokens;
    });
    CHECK(num_with_ids == static_cast<std::ptrdiff_t>(rows.size()));
    CHECK(num_inconsistent_ids(rows) == 0);
  }
}

TEST_CASE("with nothing evicted the prefix hit of every request equals the trace's own reuse",
          "[serving][validation][kv]") {
  static const H200Tp8 world;
  for (const auto& path : shipped_mooncake_traces()) {
    INFO(path.string());
    bool whole = true;
    const std::vector<TraceRecord> rows = rows_of(path, whole);
    const ImpliedReuse expected = implied_reuse(rows);
    REQUIRE(expected.hit_tokens > 0);

    KeepAll keep;
    VectorTrace trace(rows);  // at the trace's own arrival times: requests overlap
    const ServingSetup setup = world.setup(expected.num_new_blocks);
    const ServingResult res =
        simulate_serving(trace, setup, world.model, world.schedulers, world.routers, &keep);
    REQUIRE(res.num_evictions == 0);
    REQUIRE(res.num_preemptions == 0);
    CHECK(res.metrics.num_rejected == expected.num_rejected);
    CHECK(res.prefix_query_tokens == expected.query_tokens);
    CHECK(res.prefix_hit_tokens == expected.hit_tokens);

    std::int64_t num_served = 0;
    std::int64_t num_different = 0;
    for (const RequestRecord& r : keep.requests) {
      if (r.status != RequestStatus::kFinished) continue;
      ++num_served;
      const auto it = expected.hit_tokens_by_line.find(r.trace_line);
      REQUIRE(it != expected.hit_tokens_by_line.end());
      if (r.cached_prefix_tokens != it->second) {
        if (num_different == 0) {
          UNSCOPED_INFO("first difference: line " << r.trace_line << ", expected " << it->second
                                                  << " cached tokens, simulated "
                                                  << r.cached_prefix_tokens);
        }
        ++num_different;
      }
    }
    CHECK(num_served == static_cast<std::int64_t>(expected.hit_tokens_by_line.size()));
    CHECK(num_different == 0);

    // The published figures, to three decimals: issue 12 computed 0.646 for the synthetic trace
    // (requests over max_model_len excluded); SOURCES.md gives a token hit ratio of 0.374 with an
    // infinite cache for the conversation trace.
    const std::string name = path.filename().string();
    if (!whole) continue;  // the published figures are of the whole trace
    if (name == "mooncake_synthetic_trace.jsonl") {
      CHECK(res.prefix_hit_rate() == Approx(0.646).margin(0.0005));
      // The cause of issue 12's 0.527: its pool (484,933 blocks, Llama-3.1-8B on 8x H200 at
      // TP 8 as `vramsim serve` sizes it) is far smaller than the 1,352,229 blocks the trace
      // needs to keep everything, so LRU eviction is unavoidable there.
      CHECK(expected.num_new_blocks == 1'352'229);
    } else if (name == "conversation_trace.jsonl") {
      CHECK(res.prefix_hit_rate() == Approx(0.374).margin(0.0005));
    }
  }
}

TEST_CASE("under eviction the prefix hit of every request equals an independent LRU model",
          "[serving][validation][kv]") {
  // Issue 12's pool: 484,933 blocks, what `vramsim serve` gives Llama-3.1-8B on 8x H200 at TP 8.
  // Requests are spaced 100 s apart so that each finishes before the next arrives (the reference
  // serves them one after another); the pool then evicts on both traces. Simulated hit rates:
  // synthetic 0.527401 (issue 12's run at the trace's own times: 0.527), conversation 0.260268.
  constexpr std::int64_t kIssuePoolBlocks = 484'933;
  static const H200Tp8 world;
  for (const auto& path : shipped_mooncake_traces()) {
    INFO(path.string());
    bool whole = true;
    std::vector<TraceRecord> rows = rows_of(path, whole);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i].arrival = SimTime::zero() + seconds(100 * static_cast<std::int64_t>(i));
    }
    // A prefix of a trace evicts only in a pool as much smaller than what it needs as issue
    // 12's is than what the whole synthetic trace needs (484,933 of 1,352,229 blocks).
    const std::int64_t pool =
        whole ? kIssuePoolBlocks : implied_reuse(rows).num_new_blocks * 484'933 / 1'352'229;
    const std::map<std::int64_t, std::int64_t> expected = lru_reference_hits(rows, pool);

    KeepAll keep;
    VectorTrace trace(rows);
    const ServingResult res = simulate_serving(trace, world.setup(pool), world.model,
                                               world.schedulers, world.routers, &keep);
    REQUIRE(res.num_preemptions == 0);
    if (whole) CHECK(res.num_evictions > 0);  // a trace's first rows may fit the scaled pool
    std::int64_t num_different = 0;
    std::int64_t expected_hit_tokens = 0;
    for (const RequestRecord& r : keep.requests) {
      if (r.status != RequestStatus::kFinished) continue;
      const auto it = expected.find(r.trace_line);
      REQUIRE(it != expected.end());
      expected_hit_tokens += it->second;
      if (r.cached_prefix_tokens != it->second) {
        if (num_different == 0) {
          UNSCOPED_INFO("first difference: line " << r.trace_line << ", reference " << it->second
                                                  << " cached tokens, simulated "
                                                  << r.cached_prefix_tokens);
        }
        ++num_different;
      }
    }
    CHECK(num_different == 0);
    CHECK(res.prefix_hit_tokens == expected_hit_tokens);
    const ImpliedReuse unbounded = implied_reuse(rows);
    if (whole) CHECK(res.prefix_hit_tokens < unbounded.hit_tokens);  // eviction costs reuse
  }
}

}  // namespace
}  // namespace vramsim::serving
