// DeepSpeed ZeRO-3's parameter persistence and prefetch (deepspeed_zero3_gather.hpp), checked by
// hand against deepspeed/runtime/zero/parameter_offload.py (mark_persistent_parameters),
// partitioned_param_coordinator.py (fetch_sub_module) and stage3.py (_post_step) at
// deepspeedai/DeepSpeed edaa722, and Hugging Face Trainer's "auto" values (transformers
// integrations/deepspeed.py).
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>

#include "sim/run/train_options.hpp"
#include "sim/run/train_run.hpp"
#include "sim/training/deepspeed_zero3_gather.hpp"
#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"
#include "tests/training/zoo_setup.hpp"

using namespace vramsim;
using namespace vramsim::training;
namespace fs = std::filesystem;

namespace {

// Llama-3.1-8B: 32 layers of hidden 4096, RMSNorm weights only (no biases): per layer
// input_layernorm and post_attention_layernorm of 4096 elements, and the final norm.
constexpr std::int64_t kHidden = 4096;
constexpr std::int64_t kLlama8bParams = 8'030'261'248;

TrainingPlan zero3(int gpus = 8) {
  TrainingPlan p;
  p.num_gpus = gpus;
  p.strategy = Strategy::kZero3;
  p.checkpointing = Checkpointing{CheckpointKind::kFull, 1};
  p.micro_batch = 1;
  p.seq_len = 256;
  return p;
}

PersistentParams persistent_of(const std::string& model, const TrainingPlan& p) {
  return persistent_params(testing::zoo_setup(model, "h100-sxm", p).model, p);
}

TrainingResult simulate(const std::string& model, const TrainingPlan& p) {
  return simulate_training(testing::zoo_setup(model, "h100-sxm", p),
                           {.num_steps = 1, .record_timeline = false});
}

// `json` written to a file of its own under the test's temporary folder.
fs::path write_config(const std::string& name, const std::string& json) {
  const fs::path dir = fs::temp_directory_path() / "vramsim_deepspeed_zero3_gather_test";
  fs::create_directories(dir);
  const fs::path file = dir / name;
  std::ofstream(file, std::ios::binary) << json;
  return file;
}

// The run a scenario text (Llama-3.1-8B on 8 H100s plus `extra`) resolves to.
TrainingSetup resolve(const std::string& extra, const fs::path& base = {}) {
  const std::string text = "[model]\nid = \"meta-llama/Llama-3.1-8B\"\n[hardware]\n"
                           "gpu = \"h100-sxm\"\nnum_gpus = 8\n" + extra;
  return run::resolve_training(
      run::resolve_train_options(run::load_train_scenario_text(text, "s.toml", base)));
}

std::string problems(const std::string& extra, const fs::path& base = {}) {
  try {
    (void)resolve(extra, base);
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return "";
}

}  // namespace

TEST_CASE("ZeRO-3 keeps Llama-3.1-8B's 65 norm weights whole on every rank under the default "
          "threshold",
          "[training][zero3]") {
  const PersistentParams p = persistent_of("meta-llama/Llama-3.1-8B", zero3());
  CHECK(p.num_tensors == 65);
  CHECK(p.total() == 65 * kHidden);
  CHECK(p.embedding == 0);
  CHECK(p.head == kHidden);
  for (const std::int64_t n : p.per_layer) CHECK(n == 2 * kHidden);

  // Model state: the sharded 16 B per parameter (8,030,261,248 / 8 exactly), plus the whole bf16
  // copies of the persistent tensors: 266,240 elements x 2 B = 532,480 B.
  REQUIRE(kLlama8bParams % 8 == 0);
  const TrainingResult r = simulate("meta-llama/Llama-3.1-8B", zero3());
  CHECK(r.devices.front().model_state == Bytes(16 * (kLlama8bParams / 8) + 532'480));
  // Each block gathers all but its persistent tensors.
  const std::vector<BlockCosts>& blocks = r.stages.front().chunks.front();
  CHECK(blocks[1].persistent_params == 2 * kHidden);
  CHECK(blocks[1].gathered == Bytes((blocks[1].num_params - 2 * kHidden) * 2));
  // After the step the persistent tensors are all-gathered once (stage3.py _post_step).
  CHECK(r.stages.front().param_gather > Duration::zero());

  // Threshold 0: nothing persistent, the state is exactly 16 B per local parameter.
  TrainingPlan none = zero3();
  none.param_persistence_threshold = 0;
  CHECK(persistent_of("meta-llama/Llama-3.1-8B", none).num_tensors == 0);
  CHECK(simulate("meta-llama/Llama-3.1-8B", none).devices.front().model_state ==
        Bytes(16 * (kLlama8bParams / 8)));

  // 5e6: k_proj and v_proj (4096 x 1024 = 4,194,304 each) join the norms; q_proj (16.8M) not.
  TrainingPlan big = zero3();
  big.param_persistence_threshold = 5'000'000;
  const PersistentParams b = persistent_of("meta-llama/Llama-3.1-8B", big);
  CHECK(b.num_tensors == 65 + 64);
  CHECK(b.total() == 65 * kHidden + 64 * 4'194'304);

  // Qwen2.5-7B has q/k/v biases: per layer two norms (3584) and the biases 3584 + 512 + 512,
  // 28 layers and the final norm: 141 tensors.
  const PersistentParams q = persistent_of("Qwen/Qwen2.5-7B", zero3());
  CHECK(q.num_tensors == 28 * 5 + 1);
  CHECK(q.total() == 28 * (2 * 3584 + 3584 + 512 + 512) + 3584);

  // Not DeepSpeed ZeRO-3: nothing persistent.
  CHECK(persistent_of("meta-llama/Llama-3.1-8B", [] {
          TrainingPlan f = zero3();
          f.strategy = Strategy::kFsdpFull;
          return f;
        }()).num_tensors == 0);
}

TEST_CASE("stage3_model_persistence_threshold caps the persistent total in module order",
          "[training][zero3]") {
  // Ten norms fit 40,960 elements: layers 0-4's two each.
  TrainingPlan ten = zero3();
  ten.model_persistence_threshold = 10 * kHidden;
  const PersistentParams t = persistent_of("meta-llama/Llama-3.1-8B", ten);
  CHECK(t.num_tensors == 10);
  CHECK(t.total() == 10 * kHidden);
  for (std::size_t l = 0; l < t.per_layer.size(); ++l) {
    CHECK(t.per_layer[l] == (l < 5 ? 2 * kHidden : 0));
  }
  CHECK(t.head == 0);
  // One element fewer: the tenth norm (layer 4's second) no longer fits, nor any after it.
  TrainingPlan nine = zero3();
  nine.model_persistence_threshold = 10 * kHidden - 1;
  const PersistentParams n = persistent_of("meta-llama/Llama-3.1-8B", nine);
  CHECK(n.num_tensors == 9);
  CHECK(n.per_layer[4] == kHidden);
  // Threshold 5e6, cap 10M elements: layer 0 persists its norms and k_proj, v_proj (8,396,800
  // in all); layer 1's k_proj would take the total to 12,599,296, so it is skipped, and so is
  // every later k/v, but the walk goes on: the 63 later norms (258,048) still fit.
  TrainingPlan mixed = zero3();
  mixed.param_persistence_threshold = 5'000'000;
  mixed.model_persistence_threshold = 10'000'000;
  const PersistentParams m = persistent_of("meta-llama/Llama-3.1-8B", mixed);
  CHECK(m.per_layer[0] == 2 * kHidden + 2 * 4'194'304);
  CHECK(m.total() == 2 * kHidden + 2 * 4'194'304 + 63 * kHidden);
  CHECK(m.num_tensors == 4 + 63);
}

TEST_CASE("ZeRO-3's gathers split between prefetch and on demand by the bucket and max_live",
          "[training][zero3]") {
  const std::vector<std::int64_t> need{10, 10, 10}, free_of_held{0, 0, 0};
  // A bucket of 4: each block's fetch gathers 4 of the next block ahead, the rest on demand.
  CHECK(plan_gathers(need, free_of_held, 4, 100) ==
        std::vector<GatherPiece>{{0, 0, 10}, {1, 0, 4}, {1, 1, 6}, {2, 1, 4}, {2, 2, 6}});
  // No prefetch: every gather on demand.
  CHECK(plan_gathers(need, free_of_held, 0, 100) ==
        std::vector<GatherPiece>{{0, 0, 10}, {1, 1, 10}, {2, 2, 10}});
  // A bucket of 25 reaches over two blocks.
  CHECK(plan_gathers(need, free_of_held, 25, 100) ==
        std::vector<GatherPiece>{{0, 0, 10}, {1, 0, 10}, {2, 0, 10}});
  // max_live 15: with the current block's 10 alive, 5 more ahead.
  CHECK(plan_gathers(need, free_of_held, 25, 15) ==
        std::vector<GatherPiece>{{0, 0, 10}, {1, 0, 5}, {1, 1, 5}, {2, 1, 5}, {2, 2, 5}});
  // Kept blocks count: 20 held beside block 1 leave nothing under max_live 30 at its fetch.
  CHECK(plan_gathers(need, std::vector<std::int64_t>{0, 20, 20}, 10, 30) ==
        std::vector<GatherPiece>{{0, 0, 10}, {1, 0, 10}, {2, 2, 10}});
  // max_live does not hold back a block's own parameters.
  CHECK(plan_gathers(need, free_of_held, 10, 0) ==
        std::vector<GatherPiece>{{0, 0, 10}, {1, 1, 10}, {2, 2, 10}});
}

TEST_CASE("each module hook of a block prefetches up to one bucket", "[training][zero3]") {
  const std::vector<std::int64_t> need{10, 10, 10}, free_of_held{0, 0, 0};
  // Three hooks of a bucket of 4 at block 0: 12 ahead, all of block 1 and 2 of block 2; block
  // 1's hooks then take the rest of block 2 (max_live 100 allows it).
  CHECK(plan_gathers(need, free_of_held, 4, 100, std::vector<std::int64_t>{3, 3, 3}) ==
        std::vector<GatherPiece>{{0, 0, 10}, {1, 0, 10}, {2, 0, 2}, {2, 1, 8}});
  // max_live still bounds the window: 10 alive at block 0 leave 5 under 15.
  CHECK(plan_gathers(need, free_of_held, 4, 15, std::vector<std::int64_t>{3, 3, 3}) ==
        std::vector<GatherPiece>{{0, 0, 10}, {1, 0, 5}, {1, 1, 5}, {2, 1, 5}, {2, 2, 5}});
  // A block without parameter tensors still runs its own module's hook; a bucket near the
  // int64 limit times many hooks saturates instead of overflowing.
  CHECK(plan_gathers(need, free_of_held, 4, 100, std::vector<std::int64_t>{0, 0, 0}) ==
        plan_gathers(need, free_of_held, 4, 100));
  CHECK(plan_gathers(need, free_of_held, std::int64_t{1} << 62, 100,
                     std::vector<std::int64_t>{9, 9, 9}) ==
        std::vector<GatherPiece>{{0, 0, 10}, {1, 0, 10}, {2, 0, 10}});
  // Llama-3.1-8B's hooks: the embedding; per layer q, k, v, o, gate, up, down and two norms;
  // the final norm and the head.
  const model::ModelSpec llama = model::load_model(
      "meta-llama/Llama-3.1-8B", fs::path(VRAMSIM_SOURCE_ROOT) / "scenarios" / "models");
  const ModuleHooks h = module_hooks(llama, zero3());
  CHECK(h.embedding == 1);
  REQUIRE(h.per_layer.size() == 32);
  CHECK(h.per_layer[0] == 9);
  CHECK(h.head == 2);
  // Another strategy has no ZeRO-3 prefetch: no hooks counted, one zero per layer.
  TrainingPlan fsdp = zero3();
  fsdp.strategy = Strategy::kFsdpFull;
  const ModuleHooks none_counted = module_hooks(llama, fsdp);
  CHECK(none_counted.embedding == 0);
  CHECK(none_counted.per_layer == std::vector<std::int64_t>(32, 0));
  CHECK(none_counted.head == 0);
  // With DeepSpeed's default bucket (5e7) the 9 hooks of a 218M-element layer prefetch the next
  // layer whole (only the embedding block's single hook leaves most of layer 0 on demand): the
  // step is near the unbounded bucket's and well below no prefetch's.
  const auto step = [](std::int64_t bucket) {
    TrainingPlan p = zero3();
    p.seq_len = 2048;
    p.prefetch_bucket_size = bucket;
    return simulate_training(testing::zoo_setup("meta-llama/Llama-3.1-8B", "h100-sxm", p),
                             {.num_steps = 2, .record_timeline = false})
        .step_time;
  };
  const Duration unbounded = step(1'000'000'000), by_default = step(50'000'000);
  const Duration none = step(0);
  CHECK(unbounded <= by_default);
  CHECK(by_default.seconds() < 1.02 * unbounded.seconds());
  CHECK(by_default.seconds() < 0.9 * none.seconds());
}

TEST_CASE("without prefetch ZeRO-3's all-gathers are exposed and only the running block's "
          "parameters are gathered",
          "[training][zero3]") {
  // Llama-3.1-8B at 4096 tokens with the optimizer on the host (no step transient), so the
  // peak is in the backward pass.
  TrainingPlan base = zero3();
  base.seq_len = 4096;
  base.offload_optimizer = true;
  TrainingPlan off = base;
  off.prefetch_bucket_size = 0;
  TrainingPlan whole = base;  // a bucket of 1e9: as far ahead as max_live_parameters allows
  whole.prefetch_bucket_size = 1'000'000'000;
  const TrainingResult d = simulate("meta-llama/Llama-3.1-8B", base);
  const TrainingResult z = simulate("meta-llama/Llama-3.1-8B", off);
  const TrainingResult w = simulate("meta-llama/Llama-3.1-8B", whole);
  const DeviceResult &dd = d.devices.front(), &zd = z.devices.front(), &wd = w.devices.front();
  // Exposed communication and step time grow as less is prefetched.
  CHECK(zd.exposed_comm > dd.exposed_comm);
  CHECK(dd.exposed_comm > wd.exposed_comm);
  CHECK(z.step_time > d.step_time);
  CHECK(d.step_time > w.step_time);
  // The peak falls as less is gathered ahead: nothing beside the running layer without
  // prefetch, a bucket of 5e7 elements (1e8 B of bf16) by default, up to max_live_parameters'
  // 1e9 elements with the large bucket. NOTE: only the order is asserted; where the peak falls
  // in the step moves with the prefetched bytes, so the differences are not the bucket's alone.
  CHECK(zd.peak_allocated < dd.peak_allocated);
  CHECK(dd.peak_allocated < wd.peak_allocated);
  CHECK(dd.peak_allocated - zd.peak_allocated >= Bytes(100'000'000));
  CHECK(wd.peak_allocated - zd.peak_allocated <= Bytes(1'000'000'000LL * 2));
  CHECK(zd.model_state == dd.model_state);
}

TEST_CASE("Hugging Face's auto fills ZeRO-3's prefetch bucket and persistence threshold from "
          "the hidden size",
          "[training][zero3]") {
  const fs::path file = write_config(
      "auto.json", "{\"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 3, "
                   "\"stage3_prefetch_bucket_size\": \"auto\", "
                   "\"stage3_param_persistence_threshold\": \"auto\", "
                   "\"stage3_max_live_parameters\": 1e9, "
                   "\"stage3_model_persistence_threshold\": 40960}}");
  const TrainingSetup s =
      resolve("[parallel]\ndeepspeed_config = \"" + file.generic_string() + "\"\n");
  // int(0.9 x 4096^2) = int(15,099,494.4); 10 x 4096.
  CHECK(s.plan.prefetch_bucket_size == 15'099'494);
  CHECK(s.plan.param_persistence_threshold == 40'960);
  CHECK(s.plan.max_live_parameters == 1'000'000'000);
  CHECK(s.plan.model_persistence_threshold == 40'960);
  // A flag given beside "auto" wins, as over any value the configuration leaves to the run.
  const TrainingSetup flagged = resolve("[parallel]\ndeepspeed_config = \"" +
                                        file.generic_string() +
                                        "\"\nprefetch_bucket_size = 0\n");
  CHECK(flagged.plan.prefetch_bucket_size == 0);
  // Below stage 3 DeepSpeed reads neither key: "auto" is left unfilled.
  const fs::path z2 = write_config(
      "auto2.json", "{\"zero_optimization\": {\"stage\": 2, "
                    "\"stage3_prefetch_bucket_size\": \"auto\", "
                    "\"stage3_param_persistence_threshold\": \"auto\"}}");
  const TrainingSetup s2 =
      resolve("[parallel]\ndeepspeed_config = \"" + z2.generic_string() + "\"\n");
  CHECK(s2.plan.prefetch_bucket_size == kDefaultPrefetchBucketSize);
  CHECK(s2.plan.param_persistence_threshold == kDefaultParamPersistenceThreshold);
}

TEST_CASE("ZeRO-3's persistence and prefetch settings refuse bad values and other strategies",
          "[training][zero3]") {
  // Not zero3: each set away from its default is refused on its field.
  for (const auto& [field, value] :
       {std::pair{"prefetch_bucket_size", "0"}, std::pair{"param_persistence_threshold", "1"},
        std::pair{"model_persistence_threshold", "1"}, std::pair{"max_live_parameters", "1"}}) {
    const std::string p = problems(std::string("[parallel]\nstrategy = \"zero2\"\n") + field +
                                   " = " + value + "\n");
    CHECK_THAT(p, Catch::Contains(std::string("parallel.") + field));
    CHECK_THAT(p, Catch::Contains("is DeepSpeed ZeRO-3's (stage3_" + std::string(field) + ")"));
  }
  CHECK_THAT(problems("[parallel]\nstrategy = \"fsdp-full\"\nprefetch_bucket_size = 1\n"),
             Catch::Contains("fsdp-full under pytorch"));
  // Negative.
  CHECK_THAT(problems("[parallel]\nstrategy = \"zero3\"\nmax_live_parameters = -1\n"),
             Catch::Contains("must be at least 0 elements, got -1"));
  // A ds_config's values: not a number, negative, not whole.
  for (const auto& [name, value] :
       {std::pair{"text", "\"big\""}, std::pair{"negative", "-5"}, std::pair{"half", "1.5"}}) {
    const fs::path f = write_config(
        std::string(name) + ".json",
        std::string("{\"zero_optimization\": {\"stage\": 3, "
                    "\"stage3_param_persistence_threshold\": ") +
            value + "}}");
    const std::string p =
        problems("[parallel]\ndeepspeed_config = \"" + f.generic_string() + "\"\n");
    CHECK_THAT(p, Catch::Contains("zero_optimization.stage3_param_persistence_threshold"));
    CHECK_THAT(p, Catch::Contains("expected a whole number of at least 0"));
  }
  // The command line exits 2 naming the flag's field.
  const std::string cmd = std::string(VRAMSIM_BINARY) +
                          " train --model meta-llama/Llama-3.1-8B --gpu h100-sxm --num-gpus 8 "
                          "--strategy zero2 --stage3-prefetch-bucket-size 0 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) out += buf.data();
  const int status = pclose(pipe);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK_THAT(out, Catch::Contains("--stage3-prefetch-bucket-size"));
}
