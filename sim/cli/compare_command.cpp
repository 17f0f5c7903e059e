// `vramsim compare serve|train`: one GPU against N, with a verdict.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "sim/cli/commands.hpp"
#include "sim/cli/compare_serve.hpp"
#include "sim/cli/compare_train.hpp"
#include "sim/cli/train_report.hpp"
#include "sim/io/results_file.hpp"
#include "sim/io/typed_columns.hpp"

namespace vramsim::cli {
namespace {

// The step-time model of the options that ran (they share the GPU and the calibration).
std::string serve_cost_model(const CompareServeAnswer& c) {
  for (const ServeCandidate& o : c.options) {
    if (o.feasible) return o.answer.cost_model;
  }
  return "none: no option fits";
}

void write_compare_serve(const CompareServeAnswer& c, io::ResultsWriter& w) {
  const nlohmann::ordered_json j = compare_serve_json(c);
  w.write_run_metadata({.vramsim_version = "",
                        .command = command_line(),
                        .scenario_text = "",
                        .seed = 0,
                        .inputs = j.dump(),
                        .calibration_source = serve_cost_model(c),
                        .created_by = "vramsim compare"});
  // Each option's row: the fields of its typed record that the table keeps (SCHEMA.md).
  std::vector<io::TypedRecord> rows;
  for (const ServeCandidate& o : c.options) {
    const io::TypedRecord all = option_record(o);
    io::TypedRecord& row = rows.emplace_back();
    for (const char* name : {"name", "num_gpus", "feasible", "throughput_output_tokens_per_s",
                             "goodput_requests_per_s", "ttft_p50_s", "ttft_p99_s", "tpot_p50_s",
                             "tpot_p99_s", "num_preemptions", "speedup", "scaling_efficiency"}) {
      row.copy(all, name);
    }
  }
  io::TypedRecord::write_rows(w, "/compare/options", rows);
  w.set_string_attribute("/compare", "mode", "serve");
  w.set_string_attribute("/compare", "verdict", c.verdict);
  w.finish();
}

void write_compare_train(const CompareTrainAnswer& c, io::ResultsWriter& w) {
  const nlohmann::ordered_json j = compare_train_json(c);
  w.write_run_metadata({.vramsim_version = "",
                        .command = command_line(),
                        .scenario_text = "",
                        .seed = 0,
                        .inputs = j.dump(),
                        .calibration_source = run::cost_source(c.options.front().setup),
                        .created_by = "vramsim compare"});
  std::vector<io::TypedRecord> rows;
  for (const TrainOption& o : c.options) {
    // The fullest device's peaks as compare_train_json reports them (reserved with the CUDA
    // context and NCCL buffers); zero for an invalid plan.
    Bytes alloc(0), reserved(0);
    if (o.valid) {
      for (const training::DeviceResult& d : o.result.devices) {
        alloc = std::max(alloc, d.peak_allocated);
        reserved = std::max(reserved, d.peak_reserved + d.non_allocator);
      }
    }
    io::TypedRecord& row = rows.emplace_back();
    row.add("name", o.name)
        .add("num_gpus", o.num_gpus)
        .add("fits", o.valid && o.result.fits)
        .add("peak_allocated_bytes", alloc)
        .add("peak_reserved_bytes", reserved)
        .add("step_time_s", o.valid ? o.result.step_time : Duration())
        .add("tokens_per_s", io::PerSecond{o.valid ? o.result.tokens_per_s : 0.0})
        .add("speedup", io::Ratio{o.valid ? o.speedup : 0.0})
        .add("scaling_efficiency", io::Ratio{o.valid ? o.scaling_efficiency : 0.0});
  }
  io::TypedRecord::write_rows(w, "/compare/options", rows);
  w.set_string_attribute("/compare", "mode", "train");
  w.set_string_attribute("/compare", "verdict", c.verdict);
  w.finish();
}

}  // namespace

RunFn register_compare(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "compare", "One GPU against N: does a second GPU help? (serve or train)");
  cmd->require_subcommand(1);
  auto sf = std::make_shared<CompareServeFlags>();
  CLI::App* serve = cmd->add_subcommand(
      "serve", "The same traffic on one GPU, TP=N, PP=N, N replicas and a bigger batch");
  add_serve_flags(*serve, sf->serve);
  serve->add_option("--num-gpus", sf->num_gpus, "GPUs to compare one against (default 2)");
  serve->add_option("--gpu-price-per-hour", sf->price_per_gpu_hour,
                    "USD per GPU-hour: adds the cost per million output tokens");
  auto tf = std::make_shared<CompareTrainFlags>();
  CLI::App* train = cmd->add_subcommand(
      "train", "The same job on one GPU and on N: DDP, ZeRO-1/2, FSDP and TP");
  add_train_flags(*train, tf->train);
  train->add_option("--gpu-price-per-hour", tf->price_per_gpu_hour,
                    "USD per GPU-hour: adds the cost per million tokens");
  return [serve, sf, train, tf]() {
    if (train->parsed()) {
      // --num-gpus (a train flag) is the N that one GPU is compared against.
      tf->num_gpus =
          tf->train.given("--num-gpus") ? static_cast<int>(tf->train.integer("--num-gpus")) : 2;
      // The results file is opened first: a bad --out fails before the simulations run.
      std::optional<io::ResultsWriter> w;
      if (!tf->train.out.empty()) w.emplace(tf->train.out);
      const CompareTrainAnswer c = compare_train(*tf);
      if (w) write_compare_train(c, *w);
      if (tf->train.format == OutputFormat::kJson) {
        std::puts(compare_train_json(c).dump(2).c_str());
      } else {
        std::fputs(compare_train_table(c).c_str(), stdout);
      }
      return kExitOk;
    }
    if (!serve->parsed()) return -1;
    std::optional<io::ResultsWriter> w;
    if (!sf->serve.out.empty()) w.emplace(sf->serve.out);
    const CompareServeAnswer c = compare_serve(*sf);
    if (w) write_compare_serve(c, *w);
    if (sf->serve.format == OutputFormat::kJson) {
      std::puts(compare_serve_json(c).dump(2).c_str());
    } else {
      std::fputs(compare_serve_table(c).c_str(), stdout);
      if (!sf->serve.out.empty()) fmt::print("results written to {}\n", sf->serve.out);
    }
    return kExitOk;
  };
}

}  // namespace vramsim::cli
