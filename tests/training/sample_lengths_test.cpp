// A dataset's sample lengths and what padding and packing make of the step
// (sim/training/sample_lengths.hpp, TrainingPlan's shapes, simulate_training's two runs).
#include "sim/training/sample_lengths.hpp"

#include <memory>
#include <vector>

#include "sim/training/step_simulator.hpp"
#include "tests/catch.hpp"
#include "tests/core/enum_table_checks.hpp"
#include "tests/training/zoo_setup.hpp"

using namespace vramsim;
using namespace vramsim::training;

namespace {

std::shared_ptr<const SampleLengths> lengths(std::vector<std::int64_t> v) {
  return std::make_shared<const SampleLengths>(v);
}

TrainingSetup llama8b(const TrainingPlan& plan) {
  return testing::zoo_setup("meta-llama/Llama-3.1-8B", "h100-sxm", plan);
}

TrainingPlan fsdp8(std::int64_t seq_len) {
  TrainingPlan p;
  p.num_gpus = 8;
  p.strategy = Strategy::kFsdpFull;
  p.checkpointing = Checkpointing{CheckpointKind::kFull, 1};
  p.micro_batch = 2;
  p.seq_len = seq_len;
  return p;
}

}  // namespace

TEST_CASE("packing names round-trip through their table", "[training][samples][enum_table]") {
  testing::check_enum_api(kPackings, [](Packing p) { return to_string(p); }, packing_from_string,
                          packing_names());
  CHECK(packing_names() == "padded, concat, documents");
}

TEST_CASE("sample-length expectations are exact over the empirical distribution",
          "[training][samples]") {
  const SampleLengths s(std::vector<std::int64_t>{4, 1, 3, 2});
  CHECK(s.num_samples() == 4);
  CHECK(s.longest(100) == 4);
  CHECK(s.longest(3) == 3);
  CHECK(s.mean(100) == 2.5);
  CHECK(s.mean(3) == 2.25);  // 1, 2, 3, 3
  // E[max of 2] = 1 (1/16) + 2 (4/16 - 1/16) + 3 (9/16 - 4/16) + 4 (1 - 9/16) = 50/16.
  CHECK(s.expected_longest(2, 100) == Approx(50.0 / 16.0).epsilon(1e-12));
  // Truncated to 3: 1 (1/16) + 2 (3/16) + 3 (12/16) = 43/16.
  CHECK(s.expected_longest(2, 3) == Approx(43.0 / 16.0).epsilon(1e-12));
  CHECK(s.expected_longest(1, 100) == Approx(2.5).epsilon(1e-12));
  // Causal pairs l (l + 1) / 2: 1, 3, 6, 10; through a window of 2: 1, 3, 5, 7.
  CHECK(s.mean_pairs(100, 0) == 5.0);
  CHECK(s.mean_pairs(100, 2) == 4.0);
  // l x min(l, window): 1, 4, 9, 16; window 2: 1, 4, 6, 8.
  CHECK(s.mean_attended_tokens(100, 0) == 7.5);
  CHECK(s.mean_attended_tokens(100, 2) == 4.75);
  // Duplicates weigh as often as they occur.
  const SampleLengths d(std::vector<std::int64_t>{10, 10, 10, 20});
  CHECK(d.mean(100) == 12.5);
  CHECK(d.expected_longest(2, 100) == Approx(10.0 * 9.0 / 16.0 + 20.0 * 7.0 / 16.0));
}

TEST_CASE("padded samples shape the step at their padded length, packed ones at seq_len",
          "[training][samples]") {
  TrainingPlan p = fsdp8(4096);
  p.samples = lengths({100, 1000, 3000, 8000});  // 8000 is truncated to 4096
  CHECK(p.pads_samples());
  CHECK(p.shaped_seq_len() == 4096);  // the longest micro-batch: the memory peak
  CHECK(p.data_tokens_per_sequence() == (100.0 + 1000 + 3000 + 4096) / 4);
  TrainingPlan mean = p;
  mean.shape_mean_batch = true;
  // E[max of 2] = 100/16 + 1000 (3/16) + 3000 (5/16) + 4096 (7/16) = 2923.25 -> 2923.
  CHECK(mean.shaped_seq_len() == 2923);
  // Ring context parallelism over 2 ranks needs a multiple of 4: up to 2924.
  mean.cp = 2;
  CHECK(mean.shaped_seq_len() == 2924);
  mean.samples = lengths({100, 1000, 3000, 8001});
  mean.seq_len = 4100;  // truncation at 4100: E = 2923.25 + 4 x 7/16 = 2925, up to 2928
  CHECK(mean.shaped_seq_len() == 2928);
  // Flash attention over padded samples attends each sample's own tokens; eager the padding too.
  CHECK(p.attention_pairs_per_sequence(0) ==
        (50.0 * 101 + 500.0 * 1001 + 1500.0 * 3001 + 2048.0 * 4097) / 4);
  TrainingPlan eager = p;
  eager.attention = Attention::kEager;
  CHECK(eager.attention_pairs_per_sequence(0) == 4096.0 * 4097 / 2);
  // Concatenated: seq_len tokens of data; across samples the whole sequence attends, within
  // documents each of seq_len / E[l] samples its own.
  TrainingPlan concat = p;
  concat.packing = Packing::kConcat;
  CHECK_FALSE(concat.pads_samples());
  CHECK(concat.shaped_seq_len() == 4096);
  CHECK(concat.data_tokens_per_sequence() == 4096);
  CHECK(concat.attention_pairs_per_sequence(0) == 4096.0 * 4097 / 2);
  TrainingPlan docs = p;
  docs.packing = Packing::kDocuments;
  CHECK(docs.attention_pairs_per_sequence(0) ==
        Approx(4096.0 / p.data_tokens_per_sequence() * p.attention_pairs_per_sequence(0)));
  CHECK(docs.model_attended_tokens_per_sequence(0) ==
        Approx(4096.0 / p.data_tokens_per_sequence() *
               (100.0 * 100 + 1000.0 * 1000 + 3000.0 * 3000 + 4096.0 * 4096) / 4));
  // Packing without the lengths it packs is refused.
  TrainingPlan bare = fsdp8(4096);
  bare.packing = Packing::kDocuments;
  ValidationReport r;
  bare.validate(r);
  REQUIRE_FALSE(r.ok());
  CHECK(r.problems().front().field == "batch.packing");
}

TEST_CASE("samples of one length padded are that length's plain run, bit for bit",
          "[training][samples]") {
  // Every sample 1024 tokens, padded, seq_len 4096: shapes, attention, model FLOPs and tokens
  // of data are those of plain 1024-token sequences.
  TrainingPlan padded = fsdp8(4096);
  padded.samples = lengths({1024, 1024, 1024});
  const TrainingResult a = simulate_training(llama8b(padded), {.num_steps = 2,
                                                               .record_timeline = false});
  const TrainingResult b = simulate_training(llama8b(fsdp8(1024)), {.num_steps = 2,
                                                                    .record_timeline = false});
  CHECK(a.step_time == b.step_time);
  CHECK(a.devices.front().peak_reserved == b.devices.front().peak_reserved);
  CHECK(a.tokens_per_s == b.tokens_per_s);
  CHECK(a.model_flops.count() == b.model_flops.count());
  CHECK(a.mfu == b.mfu);
  // Concatenated samples are the plain 4096-token run whatever their lengths.
  TrainingPlan concat = fsdp8(4096);
  concat.samples = lengths({100, 1000, 3000});
  concat.packing = Packing::kConcat;
  const TrainingResult c = simulate_training(llama8b(concat), {.num_steps = 2,
                                                               .record_timeline = false});
  const TrainingResult d = simulate_training(llama8b(fsdp8(4096)), {.num_steps = 2,
                                                                    .record_timeline = false});
  CHECK(c.step_time == d.step_time);
  CHECK(c.tokens_per_s == d.tokens_per_s);
  CHECK(c.model_flops.count() == d.model_flops.count());
}

TEST_CASE("padding costs time and data, and its memory is the longest micro-batch's",
          "[training][samples]") {
  TrainingPlan padded = fsdp8(4096);
  padded.samples = lengths({256, 512, 1024, 4096});
  const TrainingResult r = simulate_training(llama8b(padded), {.num_steps = 2,
                                                               .record_timeline = false});
  // Memory: the 4096-token micro-batch some step meets.
  const TrainingResult full = simulate_training(llama8b(fsdp8(4096)), {.num_steps = 2,
                                                                       .record_timeline = false});
  CHECK(r.devices.front().peak_reserved == full.devices.front().peak_reserved);
  // Time: micro-batches of 2 padded to E[max] = 256/16 + 512 (3/16) + 1024 (5/16) + 4096 (7/16)
  // = 2224 tokens: the 2224-token run's step.
  TrainingPlan at_mean = fsdp8(2224);
  TrainingPlan check = padded;
  check.shape_mean_batch = true;
  REQUIRE(check.shaped_seq_len() == 2224);
  const TrainingResult m = simulate_training(llama8b(at_mean), {.num_steps = 2,
                                                                .record_timeline = false});
  // Flash attention skips the padding, so the padded step is faster than 2224 tokens of data.
  CHECK(r.step_time < m.step_time);
  CHECK(r.step_time.seconds() > 0.9 * m.step_time.seconds());
  // Tokens of data per second: 16 sequences x E[l] = 1472 tokens.
  CHECK(r.tokens_per_s == Approx(16.0 * 1472.0 / r.step_time.seconds()).epsilon(1e-12));
  // Packed as documents the same data fills every token: more data per second.
  TrainingPlan docs = padded;
  docs.packing = Packing::kDocuments;
  const TrainingResult p = simulate_training(llama8b(docs), {.num_steps = 2,
                                                             .record_timeline = false});
  CHECK(p.tokens_per_s > 1.2 * r.tokens_per_s);
  CHECK(p.step_time < full.step_time);  // attention within documents is less than across
}
