#include "sim/io/scenario_loader.hpp"

#include <fstream>
#include <sstream>

#include "sim/io/located_reader.hpp"
#include "sim/io/toml_reader.hpp"

namespace vramsim::io {

namespace {

// Reads every field of `r` into `s`; records problems in `r` without throwing.
void read_fields(TomlReader& r, ServingScenario& s) {
  const auto str = [](TomlReader& t, std::string_view p) { return t.optional_string(p); };
  const auto i64 = [](TomlReader& t, std::string_view p) { return t.optional_int64(p); };
  const auto dbl = [](TomlReader& t, std::string_view p) { return t.optional_double(p); };
  const auto bln = [](TomlReader& t, std::string_view p) { return t.optional_bool(p); };
  const auto dur = [](TomlReader& t, std::string_view p) { return t.optional_duration(p); };
  const auto byt = [](TomlReader& t, std::string_view p) { return t.optional_bytes(p); };
  r.optional_table("model");
  r.optional_table("hardware");
  r.optional_table("engine");
  r.optional_table("workload");
  r.optional_table("serving");
  r.optional_table("slo");
  r.optional_string("description");
  read_into(r, "model.id", s.model, str);
  read_into(r, "hardware.gpu", s.gpu, str);
  read_into(r, "hardware.calibration", s.calibration, str);
  read_into(r, "engine.tp", s.tp, i64);
  read_into(r, "engine.pp", s.pp, i64);
  read_into(r, "engine.dtype", s.dtype, str);
  read_into(r, "engine.kv_cache_dtype", s.kv_cache_dtype, str);
  read_into(r, "engine.quantization", s.quantization, str);
  read_into(r, "engine.max_model_len", s.max_model_len, i64);
  read_into(r, "engine.max_num_seqs", s.max_num_seqs, i64);
  read_into(r, "engine.max_num_batched_tokens", s.max_num_batched_tokens, i64);
  read_into(r, "engine.gpu_memory_utilization", s.gpu_memory_utilization, dbl);
  read_into(r, "engine.block_size", s.block_size, i64);
  read_into(r, "engine.num_gpu_blocks", s.num_gpu_blocks, i64);
  read_into(r, "engine.enforce_eager", s.enforce_eager, bln);
  read_into(r, "seed", s.seed, i64);

  read_into(r, "workload.trace", s.trace, str);
  read_into(r, "workload.format", s.trace_format, str);
  read_into(r, "workload.on_malformed", s.on_malformed, str);
  read_into(r, "workload.synthetic", s.synthetic, str);
  read_into(r, "workload.rate", s.rate, dbl);
  read_into(r, "workload.cv", s.cv, dbl);
  read_into(r, "workload.prompt_tokens", s.prompt_tokens, str);
  read_into(r, "workload.output_tokens", s.output_tokens, str);
  read_into(r, "workload.num_requests", s.num_requests, i64);
  read_into(r, "workload.duration", s.duration, dur);
  read_into(r, "workload.prefix_groups", s.prefix_groups, i64);
  read_into(r, "workload.prefix_tokens", s.prefix_tokens, i64);
  read_into(r, "workload.time_scale", s.time_scale, dbl);
  read_into(r, "workload.window_start", s.window_start, dur);
  read_into(r, "workload.window_end", s.window_end, dur);
  read_into(r, "workload.max_requests", s.max_requests, i64);
  read_into(r, "workload.max_prompt_tokens", s.max_prompt_tokens, i64);
  read_into(r, "workload.max_output_tokens", s.max_output_tokens, i64);
  read_into(r, "workload.max_total_tokens", s.max_total_tokens, i64);

  read_into(r, "serving.replicas", s.replicas, i64);
  read_into(r, "serving.scheduler", s.scheduler, str);
  read_into(r, "serving.router", s.router, str);
  read_into(r, "serving.preemption", s.preemption, str);
  read_into(r, "serving.chunk_size", s.chunk_size, i64);
  read_into(r, "serving.swap_space", s.swap_space, byt);
  read_into(r, "serving.enable_prefix_caching", s.enable_prefix_caching, bln);
  read_into(r, "serving.enable_chunked_prefill", s.enable_chunked_prefill, bln);
  read_into(r, "serving.timeseries_interval", s.timeseries_interval, dur);

  read_into(r, "slo.ttft", s.slo_ttft, dur);
  read_into(r, "slo.tpot", s.slo_tpot, dur);
  read_into(r, "slo.e2e", s.slo_e2e, dur);
}

}  // namespace

ServingScenario load_serving_scenario(const std::filesystem::path& file) {
  TomlReader r = TomlReader::from_file(file);
  ServingScenario s;
  s.file = file.string();
  s.text = read_file_text(file);
  read_fields(r, s);
  r.finish();
  return s;
}

ServingScenario load_serving_scenario_from_string(std::string_view text, std::string name) {
  TomlReader r = TomlReader::from_string(text, name);
  ServingScenario s;
  s.file = std::move(name);
  s.text = std::string(text);
  read_fields(r, s);
  r.finish();
  return s;
}

std::vector<std::string> serving_scenario_fields() {
  TomlReader r = TomlReader::from_string("", "(fields)");
  ServingScenario s;
  read_fields(r, s);
  const std::vector<std::string> known = r.known_paths();  // sorted
  std::vector<std::string> fields;
  for (std::size_t i = 0; i < known.size(); ++i) {
    // A table is followed, in sorted order, by its own "table." fields.
    const bool is_table =
        i + 1 < known.size() && known[i + 1].starts_with(known[i] + ".");
    if (!is_table) fields.push_back(known[i]);
  }
  return fields;
}

}  // namespace vramsim::io
