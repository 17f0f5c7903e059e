#include "sim/run/deepspeed_config.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include "sim/io/toml_reader.hpp"

namespace vramsim::run {

namespace {

using nlohmann::json;

constexpr std::string_view kField = "parallel.deepspeed_config";

// Keys whose values change nothing this model counts (logging, schedules, checkpoint layout,
// loss scaling, collectives' bucketing below this model's resolution), by section. Their values
// are not read.
constexpr std::array<std::string_view, 14> kAcceptedTop = {
    "steps_per_print",  "wall_clock_breakdown", "gradient_clipping",  "scheduler",
    "prescale_gradients", "gradient_predivide_factor", "tensorboard", "wandb",
    "csv_monitor",      "comet",                "flops_profiler",     "comms_logger",
    "checkpoint",       "aio"};
constexpr std::array<std::string_view, 8> kAcceptedFp16 = {
    "auto_cast",        "loss_scale",     "initial_scale_power", "loss_scale_window",
    "hysteresis",       "consecutive_hysteresis", "min_loss_scale", "enabled"};
constexpr std::array<std::string_view, 10> kAcceptedZero = {
    "allgather_partitions",
    "allgather_bucket_size",
    "reduce_scatter",
    "round_robin_gradients",
    "stage3_gather_16bit_weights_on_model_save",
    "stage3_gather_fp16_weights_on_model_save",
    "ignore_unused_parameters",
    "load_from_fp32_weights",
    "elastic_checkpoint",
    "use_multi_rank_bucket_allreduce"};
constexpr std::array<std::string_view, 3> kAcceptedOffload = {"pin_memory", "nvme_path",
                                                              "fast_init"};

// The 1-based line of byte `pos` of `text`.
int line_at(std::string_view text, std::size_t pos) {
  const auto end = text.begin() + static_cast<std::ptrdiff_t>(pos);
  return 1 + static_cast<int>(std::count(text.begin(), end, '\n'));
}

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& keys, std::string_view k) {
  return std::find(keys.begin(), keys.end(), k) != keys.end();
}

class Reader {
 public:
  Reader(std::filesystem::path file, std::string text, ValidationReport& report)
      : file_(std::move(file)), text_(std::move(text)), report_(report) {}

  DeepSpeedSettings read(const json& root) {
    if (!root.is_object()) {
      error("", "a DeepSpeed configuration is a JSON object");
      return std::move(out_);
    }
    for (const auto& [key, v] : root.items()) top_level(key, v);
    // DeepSpeed trains in fp32 unless a bf16 or fp16 section enables half precision.
    if (!root.contains("bf16") && !root.contains("fp16") && !root.contains("bfloat16")) {
      set("memory.precision", std::string("fp32"), "bf16");
    }
    if (!root.contains("zero_optimization")) set("parallel.strategy", std::string("ddp"), "");
    set("parallel.framework", std::string("deepspeed"), "");
    return std::move(out_);
  }

 private:
  void top_level(const std::string& key, const json& v) {
    if (key == "train_micro_batch_size_per_gpu") {
      if (auto n = count(key, v)) set("batch.micro_batch", *n, key);
    } else if (key == "train_batch_size") {
      if (auto n = count(key, v)) set("batch.global_batch", *n, key);
    } else if (key == "gradient_accumulation_steps") {
      if (auto n = count(key, v)) out_.gradient_accumulation_steps = *n;
    } else if (key == "bf16" || key == "bfloat16" || key == "fp16") {
      half_precision(key, v);
    } else if (key == "optimizer") {
      optimizer(v);
    } else if (key == "zero_optimization") {
      zero(v);
    } else if (key == "activation_checkpointing") {
      error(key, "DeepSpeed's activation checkpointing (Megatron-LM's) is not read: set "
                 "--checkpointing (none, selective, full, every:K)");
    } else if (!listed(kAcceptedTop, key)) {
      unknown(key);
    }
  }

  void half_precision(const std::string& key, const json& v) {
    if (!v.is_object()) return error(key, "expected an object such as {\"enabled\": true}");
    for (const auto& [k, x] : v.items()) {
      if (!listed(kAcceptedFp16, k)) unknown(key + "." + k);
    }
    const auto it = v.find("enabled");
    if (it == v.end() || is_auto(*it)) return;
    if (!it->is_boolean()) return error(key + ".enabled", "expected true, false or \"auto\"");
    if (it->get<bool>()) {
      set("memory.precision", std::string(key == "fp16" ? "fp16-mixed" : "bf16-mixed"),
          key + ".enabled");
    }
  }

  void optimizer(const json& v) {
    if (!v.is_object()) return error("optimizer", "expected an object with a \"type\"");
    for (const auto& [k, x] : v.items()) {
      if (k != "type" && k != "params") unknown("optimizer." + k);
    }
    const auto it = v.find("type");
    if (it == v.end() || is_auto(*it)) return;
    if (!it->is_string()) return error("optimizer.type", "expected a string such as \"AdamW\"");
    std::string t = it->get<std::string>();
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
    if (t == "adam" || t == "adamw") return set("memory.optimizer", t, "type");
    error("optimizer.type",
          fmt::format("\"{}\" is not modelled: Adam and AdamW are (pass --optimizer for sgd or "
                      "adam8bit and leave the type out)",
                      it->get<std::string>()));
  }

  void zero(const json& z) {
    if (!z.is_object()) return error("zero_optimization", "expected an object");
    std::int64_t stage = 0;
    if (const auto it = z.find("stage"); it != z.end()) {
      if (auto n = count("zero_optimization.stage", *it, 0)) stage = *n;
    }
    static constexpr std::array<std::string_view, 4> kStrategies = {"ddp", "zero1", "zero2",
                                                                    "zero3"};
    if (stage > 3) {
      error("zero_optimization.stage", fmt::format("must be 0-3, got {}", stage));
    } else {
      set("parallel.strategy", std::string(kStrategies[static_cast<std::size_t>(stage)]), "stage");
    }
    // overlap_comm's default is stage-dependent (config.py, overlap_comm_valid): on for stage 3,
    // where this model keeps one bucket either way.
    for (const auto& [k, v] : z.items()) {
      const std::string key = "zero_optimization." + k;
      if (k == "stage") continue;
      if (k == "offload_optimizer") {
        offload(key, v, true);
      } else if (k == "offload_param") {
        offload(key, v, false);
      } else if (k == "sub_group_size") {
        if (auto n = count(key, v)) set("memory.sub_group_size", *n, k);
      } else if (k == "reduce_bucket_size") {
        if (is_auto(v)) {
          out_.reduce_bucket_size_auto = true;
        } else if (auto n = count(key, v)) {
          set("parallel.reduce_bucket_size", *n, k);
        }
      } else if (k == "contiguous_gradients") {
        if (auto b = boolean(key, v)) set("parallel.contiguous_gradients", *b, k);
      } else if (k == "overlap_comm") {
        if (auto b = boolean(key, v)) {
          if (stage < 3) set("parallel.overlap_comm", *b, k);
        }
      } else if (k == "stage3_max_reuse_distance") {
        if (auto n = count(key, v, 0)) set("parallel.max_reuse_distance", *n, k);
      } else if (k == "stage3_prefetch_bucket_size") {
        if (is_auto(v)) {
          out_.prefetch_bucket_size_auto = true;
        } else if (auto n = count(key, v, 0)) {
          set("parallel.prefetch_bucket_size", *n, k);
        }
      } else if (k == "stage3_param_persistence_threshold") {
        if (is_auto(v)) {
          out_.param_persistence_threshold_auto = true;
        } else if (auto n = count(key, v, 0)) {
          set("parallel.param_persistence_threshold", *n, k);
        }
      } else if (k == "stage3_model_persistence_threshold") {
        if (auto n = count(key, v, 0)) set("parallel.model_persistence_threshold", *n, k);
      } else if (k == "stage3_max_live_parameters") {
        if (auto n = count(key, v, 0)) set("parallel.max_live_parameters", *n, k);
      } else if (k == "cpu_offload") {
        error(key, "the deprecated cpu_offload is not read: write "
                   "\"offload_optimizer\": {\"device\": \"cpu\"}");
      } else if (!listed(kAcceptedZero, k)) {
        unknown(key);
      }
    }
  }

  void offload(const std::string& key, const json& v, bool optimizer) {
    if (!v.is_object()) return error(key, "expected an object with a \"device\"");
    std::string device = "none";
    for (const auto& [k, x] : v.items()) {
      const std::string sub = key + "." + k;
      if (k == "device") {
        if (!x.is_string()) return error(sub, "expected \"none\", \"cpu\" or \"nvme\"");
        device = x.get<std::string>();
        if (device != "none" && device != "cpu" && device != "nvme") {
          return error(sub, fmt::format("expected \"none\", \"cpu\" or \"nvme\", got \"{}\"",
                                        device));
        }
      } else if (k == "buffer_count") {
        // The host swap buffers this model counts are DeepSpeed's defaults.
        require_default(sub, x, optimizer ? 4.0 : 5.0);
      } else if (k == "buffer_size" && !optimizer) {
        require_default(sub, x, 1e8);
      } else if (k == "ratio" && optimizer) {
        require_default(sub, x, 1.0);
      } else if ((k == "pipeline_read" || k == "pipeline_write") && optimizer) {
        if (auto b = boolean(sub, x); b && *b) {
          error(sub, "pipelined NVMe swapping is not modelled (the step is PCIe + CPU Adam + "
                     "NVMe in series, DeepSpeed's default)");
        }
      } else if (!listed(kAcceptedOffload, k) && !(k == "max_in_cpu" && !optimizer)) {
        unknown(sub);
      }
    }
    if (optimizer) {
      set("memory.offload_optimizer", device != "none", "offload_optimizer");
      if (device != "none") set("memory.offload_optimizer_device", device, "offload_optimizer");
    } else {
      set("memory.offload_params", device, "offload_param");
    }
  }

  void require_default(const std::string& key, const json& x, double value) {
    if (!x.is_number() || x.get<double>() != value) {
      error(key, fmt::format("only DeepSpeed's default {} is modelled, got {}", value, x.dump()));
    }
  }

  static bool is_auto(const json& v) { return v.is_string() && v.get<std::string>() == "auto"; }

  // A count: a JSON integer, or a number with no fraction (DeepSpeed configs write 5e8).
  std::optional<std::int64_t> count(const std::string& key, const json& v, std::int64_t min = 1) {
    if (is_auto(v)) return std::nullopt;
    if (v.is_number_integer()) {
      const auto n = v.get<std::int64_t>();
      if (n >= min) return n;
    } else if (v.is_number_float()) {
      const double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && d >= static_cast<double>(min) &&
          d < 9.2e18) {
        return static_cast<std::int64_t>(d);
      }
    }
    error(key, fmt::format("expected a whole number of at least {} or \"auto\", got {}", min,
                           v.dump()));
    return std::nullopt;
  }

  std::optional<bool> boolean(const std::string& key, const json& v) {
    if (is_auto(v)) return std::nullopt;
    if (v.is_boolean()) return v.get<bool>();
    error(key, fmt::format("expected true or false, got {}", v.dump()));
    return std::nullopt;
  }

  void set(const std::string& path, RawValue value, std::string_view key) {
    out_.values[path] = GivenValue{std::move(value), Origin{OriginKind::kScenario, at(key), ""}};
  }

  void unknown(const std::string& key) {
    error(key, "not a DeepSpeed setting this model reads or can leave out (see "
               "sim/run/deepspeed_config.hpp); remove it to simulate without it");
  }

  void error(const std::string& key, std::string message) {
    const std::string last = key.substr(key.rfind('.') + 1);
    report_.error(std::string(kField),
                  key.empty() ? std::move(message) : fmt::format("{}: {}", key, message),
                  at(last));
  }

  // The file, at the first line that names `key` (a JSON reader keeps no lines).
  SourceLocation at(std::string_view key) const {
    if (key.empty()) return {file_.string(), 0};
    const std::size_t pos = text_.find(fmt::format("\"{}\"", key));
    if (pos == std::string::npos) return {file_.string(), 0};
    return {file_.string(), line_at(text_, pos)};
  }

  std::filesystem::path file_;
  std::string text_;
  ValidationReport& report_;
  DeepSpeedSettings out_;
};

}  // namespace

DeepSpeedSettings read_deepspeed_config(const std::filesystem::path& file,
                                        ValidationReport& report) {
  std::string text;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    report.error(std::string(kField), "no such file (a DeepSpeed configuration, JSON)",
                 {file.string(), 0});
    return {};
  }
  try {
    text = io::read_file_text(file);
  } catch (const std::exception& e) {
    report.error(std::string(kField), e.what(), {file.string(), 0});
    return {};
  }
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    // e.byte: 1-based offset of the error.
    const std::size_t upto = std::min(text.size(), static_cast<std::size_t>(e.byte));
    report.error(std::string(kField), fmt::format("not valid JSON: {}", e.what()),
                 {file.string(), line_at(text, upto)});
    return {};
  }
  return Reader(file, std::move(text), report).read(root);
}

}  // namespace vramsim::run
