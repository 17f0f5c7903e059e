// `vramsim compare serve|train`: one GPU against N, with a verdict.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/cli/compare_serve.hpp"
#include "sim/cli/compare_train.hpp"
#include "sim/io/results_file.hpp"

namespace vramsim::cli {
namespace {

void write_compare_serve(const CompareServeAnswer& c, const std::string& out) {
  io::ResultsWriter w(out);
  const nlohmann::ordered_json j = compare_serve_json(c);
  w.write_run_metadata({.vramsim_version = "",
                        .command = command_line(),
                        .scenario_text = "",
                        .seed = 0,
                        .inputs = j.dump(),
                        .calibration_source = "",
                        .created_by = "vramsim compare"});
  std::vector<std::string> names;
  std::vector<std::int64_t> gpus, feasible, preemptions;
  std::vector<double> tput, goodput, ttft50, ttft99, tpot50, tpot99, speedup, efficiency;
  for (const auto& o : j["options"]) {
    names.push_back(o["name"].get<std::string>());
    gpus.push_back(o["num_gpus"].get<std::int64_t>());
    const bool ok = o["feasible"].get<bool>();
    feasible.push_back(ok ? 1 : 0);
    const auto num = [&](const char* k) { return ok ? o[k].get<double>() : 0.0; };
    tput.push_back(num("throughput_output_tokens_per_s"));
    goodput.push_back(num("goodput_requests_per_s"));
    ttft50.push_back(num("ttft_p50_s"));
    ttft99.push_back(num("ttft_p99_s"));
    tpot50.push_back(num("tpot_p50_s"));
    tpot99.push_back(num("tpot_p99_s"));
    speedup.push_back(num("speedup"));
    efficiency.push_back(num("scaling_efficiency"));
    preemptions.push_back(ok ? o["num_preemptions"].get<std::int64_t>() : 0);
  }
  using io::Column;
  w.write_table("/compare/options",
                {Column::string("name", names), Column::int64("num_gpus", io::kUnitsCount, gpus),
                 Column::int64("feasible", io::kUnitsCount, feasible),
                 Column::float64("throughput_output_tokens_per_s", "1/s", tput),
                 Column::float64("goodput_requests_per_s", "1/s", goodput),
                 Column::float64("ttft_p50_s", io::kUnitsSeconds, ttft50),
                 Column::float64("ttft_p99_s", io::kUnitsSeconds, ttft99),
                 Column::float64("tpot_p50_s", io::kUnitsSeconds, tpot50),
                 Column::float64("tpot_p99_s", io::kUnitsSeconds, tpot99),
                 Column::int64("num_preemptions", io::kUnitsCount, preemptions),
                 Column::float64("speedup", io::kUnitsCount, speedup),
                 Column::float64("scaling_efficiency", io::kUnitsCount, efficiency)});
  w.set_string_attribute("/compare", "mode", "serve");
  w.set_string_attribute("/compare", "verdict", c.verdict);
  w.finish();
}

void write_compare_train(const CompareTrainAnswer& c, const std::string& out) {
  io::ResultsWriter w(out);
  const nlohmann::ordered_json j = compare_train_json(c);
  w.write_run_metadata({.vramsim_version = "",
                        .command = command_line(),
                        .scenario_text = "",
                        .seed = 0,
                        .inputs = j.dump(),
                        .calibration_source = "",
                        .created_by = "vramsim compare"});
  std::vector<std::string> names;
  std::vector<std::int64_t> gpus, fits, alloc, reserved;
  std::vector<double> step, tps, speedup, efficiency;
  for (const auto& o : j["options"]) {
    const bool valid = o["valid"].get<bool>();
    names.push_back(o["name"].get<std::string>());
    gpus.push_back(o["num_gpus"].get<std::int64_t>());
    fits.push_back(o["fits"].get<bool>() ? 1 : 0);
    alloc.push_back(valid ? o["peak_allocated_bytes"].get<std::int64_t>() : 0);
    reserved.push_back(valid ? o["peak_reserved_bytes"].get<std::int64_t>() : 0);
    step.push_back(valid ? o["step_time_s"].get<double>() : 0.0);
    tps.push_back(valid ? o["tokens_per_s"].get<double>() : 0.0);
    speedup.push_back(valid ? o["speedup"].get<double>() : 0.0);
    efficiency.push_back(valid ? o["scaling_efficiency"].get<double>() : 0.0);
  }
  using io::Column;
  w.write_table("/compare/options",
                {Column::string("name", names), Column::int64("num_gpus", io::kUnitsCount, gpus),
                 Column::int64("fits", io::kUnitsCount, fits),
                 Column::int64("peak_allocated_bytes", io::kUnitsBytes, alloc),
                 Column::int64("peak_reserved_bytes", io::kUnitsBytes, reserved),
                 Column::float64("step_time_s", io::kUnitsSeconds, step),
                 Column::float64("tokens_per_s", "1/s", tps),
                 Column::float64("speedup", io::kUnitsCount, speedup),
                 Column::float64("scaling_efficiency", io::kUnitsCount, efficiency)});
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
      const CompareTrainAnswer c = compare_train(*tf);
      if (!tf->train.out.empty()) write_compare_train(c, tf->train.out);
      if (tf->train.format == OutputFormat::kJson) {
        std::puts(compare_train_json(c).dump(2).c_str());
      } else {
        std::fputs(compare_train_table(c).c_str(), stdout);
      }
      return kExitOk;
    }
    if (!serve->parsed()) return -1;
    const CompareServeAnswer c = compare_serve(*sf);
    if (!sf->serve.out.empty()) write_compare_serve(c, sf->serve.out);
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
