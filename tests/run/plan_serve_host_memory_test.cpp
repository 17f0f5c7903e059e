// plan serve's default bound on the KV tiers' host memory (issue 16): without --max-host-memory
// each row's node sheet bounds its tiers per node (the engines on one node share its memory,
// hardware::kv_tier_host_bytes_per_node), the flag replaces that bound with one for the whole
// deployment, a node sheet without host_memory bounds nothing, and the answer says which bound
// applied; a node sheet changed between a run and its --resume is not resumed from the stale
// journal.
#include "sim/run/plan_serve_run.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "sim/run/plan_serve_host_memory.hpp"
#include "sim/run/plan_serve_results.hpp"
#include "sim/run/sweep_output.hpp"
#include "sim/run/serve_options.hpp"
#include "tests/catch.hpp"

namespace run = vramsim::run;

namespace {

// tests/run/plan_serve_kv_tier_test.cpp's prefix-heavy workload: Llama-3.1-8B with its GPU
// cache cut to 300 blocks, 200 requests in 8 prefix groups. One 16-token block of bf16 KV is
// 2 MiB, so every tier below is whole blocks: per replica exactly its size.
run::PlanServeRequest request(const std::string& gpu) {
  run::PlanServeRequest q;
  q.options = run::resolve_serve_options(run::load_serve_scenario_text(
      "seed = 1\n[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\ngpu = \"" + gpu +
          "\"\n[engine]\nmax_model_len = 4096\nnum_gpu_blocks = 300\n"
          "[workload]\nsynthetic = \"poisson\"\nrate = 50.0\nnum_requests = 200\n"
          "prompt_tokens = \"fixed:1100\"\noutput_tokens = \"fixed:4\"\nprefix_groups = 8\n"
          "prefix_tokens = 1024\n",
      "t.toml"));
  q.capacity = false;
  q.early_stop = true;
  q.jobs = 2;
  return q;
}

const char* const kH100Bound =
    "node sheets' host_memory, per node (the engines on a node share it): h100-sxm on "
    "h100-sxm-8x-nvswitch (2048.00 GiB)";

}  // namespace

TEST_CASE("without --max-host-memory, plan serve skips a row whose tiers on one node exceed "
          "the node sheet's host memory, and says where the bound came from",
          "[run][plan][serve][kv][offload]") {
  run::PlanServeRequest q = request("h100-sxm");
  q.tps = {1};
  q.replicas = {8};
  q.kv_offloading_sizes = {"300GiB"};
  const run::PlanServeAnswer a = run::plan_serve(q);
  REQUIRE(a.rows.size() == 1);
  const run::PlanServeRow& r = a.rows[0];
  // Eight 1-GPU replicas fill one DGX H100: 8 x 300 GiB = 2400 GiB > its 2 TiB (2048 GiB).
  CHECK(r.status == run::ServePlanStatus::kOverMaxHostMemory);
  CHECK(r.host_memory_bytes == vramsim::GiB(2400));
  CHECK(r.reason ==
        "KV tiers take 2400.00 GiB of host memory on one 8-GPU node (8 engines of 1 GPUs x "
        "300.00 GiB) > host_memory 2048.00 GiB of node sheet h100-sxm-8x-nvswitch");
  CHECK(a.counts.num_skipped_max_host_memory == 1);
  CHECK(a.host_memory_bound == kH100Bound);
  const nlohmann::ordered_json j = run::plan_serve_json(a);
  CHECK(j["host_memory_bound"] == kH100Bound);
  CHECK(j["num_skipped_max_host_memory"] == 1);
  CHECK(run::plan_serve_message(a).find("1 above the host memory bound (node sheets'") !=
        std::string::npos);
}

TEST_CASE("the node bound is per node: wider replicas put fewer tiers on each node",
          "[run][plan][serve][kv][offload]") {
  run::PlanServeRequest q = request("h100-sxm");
  q.tps = {2, 4};
  q.replicas = {4};
  q.kv_offloading_sizes = {"600GiB"};
  const run::PlanServeAnswer a = run::plan_serve(q);
  REQUIRE(a.rows.size() == 2);
  // Both need 4 x 600 GiB = 2400 GiB in all. TP 2: four replicas fill one 8-GPU node, 2400 GiB
  // there > 2048 GiB. TP 4: two per node, 1200 GiB on each of two nodes: it runs.
  CHECK(a.rows[0].tp == 2);
  CHECK(a.rows[0].status == run::ServePlanStatus::kOverMaxHostMemory);
  CHECK(a.rows[1].tp == 4);
  CHECK(a.rows[1].host_memory_bytes == vramsim::GiB(2400));
  CHECK(a.rows[1].simulated());
}

TEST_CASE("plan serve --max-host-memory replaces the node bound with one for the whole deployment",
          "[run][plan][serve][kv][offload]") {
  run::PlanServeRequest q = request("h100-sxm");
  q.tps = {1};
  q.replicas = {8};
  q.kv_offloading_sizes = {"300GiB"};
  q.max_host_memory = "3TiB";  // the deployment's 2400 GiB fit, whatever one node holds
  const run::PlanServeAnswer a = run::plan_serve(q);
  REQUIRE(a.rows.size() == 1);
  CHECK(a.rows[0].simulated());
  CHECK(a.counts.num_skipped_max_host_memory == 0);
  CHECK(a.host_memory_bound == "--max-host-memory 3072.00 GiB: the deployment's KV tiers together");
}

TEST_CASE("a GPU whose node sheet records no host memory is not bounded, and the answer says so",
          "[run][plan][serve][kv][offload]") {
  run::PlanServeRequest q = request("l4");
  q.tps = {1};
  q.replicas = {1};
  q.kv_offloading_sizes = {"300GiB"};
  const run::PlanServeAnswer a = run::plan_serve(q);
  REQUIRE(a.rows.size() == 1);
  CHECK(a.rows[0].status != run::ServePlanStatus::kOverMaxHostMemory);
  CHECK(a.host_memory_bound ==
        "none: no --max-host-memory, and no node sheet records host_memory (l4 on pcie-8x "
        "(none recorded: not bounded))");
}

TEST_CASE("a search without a KV tier has no host memory bound", "[run][plan][serve]") {
  run::PlanServeRequest q = request("h100-sxm");
  q.tps = {1};
  q.replicas = {1};
  const run::PlanServeAnswer a = run::plan_serve(q);
  CHECK(a.host_memory_bound.empty());
  CHECK_FALSE(run::plan_serve_json(a).contains("host_memory_bound"));
}

namespace {

// VRAMSIM_ROOT pointed at a copy of topologies/ (scenarios/ linked) for one test, so that it may
// edit a node sheet; restored when it goes.
class CopiedDataRoot {
 public:
  explicit CopiedDataRoot(const std::filesystem::path& dir) : dir_(dir) {
    namespace fs = std::filesystem;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::copy(fs::path(VRAMSIM_SOURCE_ROOT) / "topologies", dir_ / "topologies",
             fs::copy_options::recursive);
    fs::create_directory_symlink(fs::path(VRAMSIM_SOURCE_ROOT) / "scenarios", dir_ / "scenarios");
    ::setenv("VRAMSIM_ROOT", dir_.c_str(), 1);
  }
  ~CopiedDataRoot() { ::unsetenv("VRAMSIM_ROOT"); }
  CopiedDataRoot(const CopiedDataRoot&) = delete;
  CopiedDataRoot& operator=(const CopiedDataRoot&) = delete;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace

TEST_CASE("plan serve --resume does not reuse a journal written under a node sheet whose host "
          "memory has changed since",
          "[run][plan][serve][kv][offload][resume]") {
  namespace fs = std::filesystem;
  const CopiedDataRoot root(fs::temp_directory_path() / "vramsim_run_test" /
                            "plan_serve_node_resume");
  const fs::path sheet = root.dir() / "topologies" / "nodes" / "h100-sxm-8x-nvswitch.toml";
  run::PlanServeRequest q = request("h100-sxm");
  q.tps = {1};
  q.replicas = {1};
  q.kv_offloading_sizes = {"1200GiB"};  // within the DGX H100's 2 TiB, above 1 TiB
  q.out = root.dir() / "plan.h5";
  const run::PlanServeAnswer first = run::plan_serve(q);
  REQUIRE(first.rows.size() == 1);
  REQUIRE(first.rows[0].simulated());
  // An interrupted run's journal: the row's record, altered so that its reuse shows, under the
  // digest of the search as it was.
  const auto journal = [&] {
    run::KvLinkTopologies topologies;
    const std::string digest = run::plan_serve_fingerprint(
        q.options, first.slo, true,
        run::node_host_memory_inputs(topologies, q.options.topology, run::plan_serve_space(q)));
    run::PlanServeRow altered = first.rows[0];
    altered.num_good = 12345;
    std::ofstream(run::journal_path(q.out))
        << run::record_to_json(run::serve_plan_row_record(altered, digest)) << "\n";
  };
  journal();
  q.resume = true;
  const run::PlanServeAnswer same = run::plan_serve(q);
  CHECK(same.counts.num_resumed == 1);
  CHECK(same.rows[0].num_good == 12345);

  // The sheet now records 1 TiB: the journal is of another search, the row is evaluated again
  // and its 1200 GiB tier no longer fits the node.
  journal();
  std::string text;
  {
    std::ifstream in(sheet);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string from = "host_memory = \"2TiB\"";
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), "host_memory = \"1TiB\"");
  std::ofstream(sheet) << text;
  const run::PlanServeAnswer changed = run::plan_serve(q);
  CHECK(changed.counts.num_resumed == 0);
  CHECK(changed.rows[0].status == run::ServePlanStatus::kOverMaxHostMemory);
  CHECK(changed.rows[0].num_good != 12345);
}
