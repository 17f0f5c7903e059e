#include "sim/cli/serve_config.hpp"

#include "sim/core/units.hpp"
#include "sim/serving/traces/azure_conv_fit.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <vector>

namespace vramsim::cli {
namespace {

// The table's names joined "a (note) or b", with `note` after the name of `marked`.
template <class E, std::size_t N, std::size_t A>
std::string names_or(const EnumTable<E, N, A>& t, E marked, std::string_view note) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? " or " : ", ";
    out += t.rows[i].name;
    if (t.rows[i].value == marked) out += fmt::format(" ({})", note);
  }
  return out;
}

// Where a workload value came from, so that TraceSpec::validate's "workload.<key>" problems can
// be filed under the flag or the scenario line.
struct Source {
  std::string key;   // TraceSpec::validate's key
  std::string flag;  // "--rate"
  std::optional<std::pair<std::string, SourceLocation>> scenario;
};

class Resolver {
 public:
  Resolver(const ServeFlags& f, const io::ServingScenario& sc, Origins& origins)
      : f_(f), sc_(sc), origins_(origins) {}

  template <class T>
  T value(const std::string& key, const std::string& flag, const T& flag_value,
          const std::optional<io::Located<T>>& from_file, const T& fallback) {
    track(key, flag, from_file);
    return pick(f_.given, flag, flag_value, from_file, fallback, origins_);
  }

  /// A flag given as text ("2s") or a scenario duration; nullopt when neither is set and the
  /// flag's default text is empty.
  std::optional<Duration> duration(const std::string& key, const std::string& flag,
                                   const std::string& text,
                                   const std::optional<io::Located<Duration>>& from_file) {
    track(key, flag, from_file);
    if (!f_.given.given(flag) && from_file) {
      origins_.from_scenario(flag, from_file->field, from_file->where);
      return from_file->value;
    }
    if (text.empty()) return std::nullopt;
    try {
      return parse_duration(text);
    } catch (const std::exception& e) {
      report_.error(flag, e.what());
      return std::nullopt;
    }
  }

  template <class T>
  std::optional<T> optional_count(const std::string& key, const std::string& flag, T flag_value,
                                  const std::optional<io::Located<T>>& from_file) {
    const T v = value(key, flag, flag_value, from_file, T{0});
    if (!f_.given.given(flag) && !from_file) return std::nullopt;
    return v;
  }

  /// Re-files problems on "workload.<key>" under the flag or scenario field that set it.
  void relocate_workload(ValidationReport& report) const {
    ValidationReport moved;
    for (Problem p : report.problems()) {
      for (const Source& s : sources_) {
        if (p.field != "workload." + s.key) continue;
        if (f_.given.given(s.flag)) {
          p.field = s.flag;
        } else if (s.scenario) {
          p.field = s.scenario->first;
          p.where = s.scenario->second;
        }
      }
      moved.error(p.field, p.message, p.where);
    }
    report = moved;
  }

  ValidationReport& report() { return report_; }

 private:
  template <class T>
  void track(const std::string& key, const std::string& flag,
             const std::optional<io::Located<T>>& from_file) {
    Source s{key, flag, std::nullopt};
    if (from_file) s.scenario = std::make_pair(from_file->field, from_file->where);
    sources_.push_back(std::move(s));
  }

  const ServeFlags& f_;
  const io::ServingScenario& sc_;
  Origins& origins_;
  std::vector<Source> sources_;
  ValidationReport report_;
};

serving::TraceSpec resolve_workload(const ServeFlags& f, const io::ServingScenario& sc,
                                    std::uint64_t seed, Resolver& rs) {
  using namespace serving;
  std::string trace = rs.value<std::string>("path", "--trace", f.trace, sc.trace, "");
  // A relative trace path in a scenario file is relative to the scenario's folder.
  if (!f.given.given("--trace") && sc.trace && !trace.empty() &&
      std::filesystem::path(trace).is_relative()) {
    trace = (std::filesystem::path(sc.file).parent_path() / trace).string();
  }
  TraceSpec spec;
  if (!trace.empty()) {
    spec.kind = TraceKind::kFile;
    spec.path = trace;
    const auto format =
        rs.value<std::string>("format", "--trace-format", f.trace_format, sc.trace_format, "auto");
    if (const auto parsed = trace_format_from_string(format)) {
      spec.format = *parsed;
    } else {
      rs.report().error("--trace-format", fmt::format("unknown format '{}'; valid: {}", format,
                                                      names_list<kTraceFormats>()));
    }
  } else {
    const auto kind =
        rs.value<std::string>("synthetic", "--synthetic", f.synthetic, sc.synthetic, "azure-conv");
    const auto n = rs.value("num_requests", "--num-requests", f.num_requests, sc.num_requests,
                            std::int64_t{1000});
    if (kind == "azure-conv") {
      spec = azure_conv_synthetic(n, seed);
    } else if (const auto process = arrival_process_from_string(kind)) {
      spec.kind = TraceKind::kSynthetic;
      spec.synthetic.arrivals.process = *process;
      spec.synthetic.num_requests = n;
      spec.synthetic.seed = seed;
    } else {
      rs.report().error("--synthetic", fmt::format("unknown workload '{}'; valid: azure-conv, {}",
                                                   kind, names_list<kArrivalProcesses>()));
    }
    SyntheticSpec& s = spec.synthetic;
    s.arrivals.rate_per_s =
        rs.value("rate", "--rate", f.rate, sc.rate, s.arrivals.rate_per_s);
    s.arrivals.cv = rs.value("cv", "--cv", f.cv, sc.cv, s.arrivals.cv);
    s.duration = rs.duration("duration", "--duration", f.duration, sc.duration);
    if (s.duration && !f.given.given("--num-requests") && !sc.num_requests) {
      s.num_requests.reset();  // a duration alone ends the stream
    }
    const auto lengths = [&](const std::string& key, const std::string& flag,
                             const std::string& text,
                             const std::optional<io::Located<std::string>>& file,
                             LengthDistribution& out) {
      const auto t = rs.value<std::string>(key, flag, text, file, "");
      if (t.empty()) return;
      try {
        out = parse_length_distribution(t, flag);
      } catch (const ConfigError& e) {
        for (const Problem& p : e.report().problems()) rs.report().error(flag, p.message);
      }
    };
    lengths("prompt_lengths", "--prompt-tokens", f.prompt_tokens, sc.prompt_tokens, s.prompt);
    lengths("output_lengths", "--output-tokens", f.output_tokens, sc.output_tokens, s.output);
    s.shared_prefix.num_groups = rs.value("prefix_groups", "--prefix-groups", f.prefix_groups,
                                          sc.prefix_groups, std::int64_t{0});
    s.shared_prefix.prefix_tokens = rs.value("prefix_tokens", "--prefix-tokens", f.prefix_tokens,
                                             sc.prefix_tokens, std::int64_t{0});
  }
  const auto policy =
      rs.value<std::string>("on_malformed", "--on-malformed", f.on_malformed, sc.on_malformed,
                            "error");
  if (const auto parsed = malformed_row_policy_from_string(policy)) {
    spec.malformed_rows = *parsed;
  } else {
    rs.report().error("--on-malformed",
                      fmt::format("'{}': expected {}", policy,
                                  join_names(kMalformedRowPolicies, ", ", " or ")));
  }
  TraceTransforms& t = spec.transforms;
  t.time_scale = rs.value("time_scale", "--time-scale", f.time_scale, sc.time_scale, 1.0);
  t.window_start = rs.duration("window_start", "--window-start", f.window_start, sc.window_start);
  t.window_end = rs.duration("window_end", "--window-end", f.window_end, sc.window_end);
  t.max_requests = rs.optional_count("max_requests", "--max-requests", f.max_requests,
                                     sc.max_requests);
  t.max_prompt_tokens = rs.optional_count("max_prompt_tokens", "--max-prompt-tokens",
                                          f.max_prompt_tokens, sc.max_prompt_tokens);
  t.max_output_tokens = rs.optional_count("max_output_tokens", "--max-output-tokens",
                                          f.max_output_tokens, sc.max_output_tokens);
  t.max_total_tokens = rs.optional_count("max_total_tokens", "--max-total-tokens",
                                         f.max_total_tokens, sc.max_total_tokens);
  return spec;
}

}  // namespace

ServeConfig resolve_serve(const ServeFlags& f, Origins& origins) {
  io::ServingScenario sc;
  if (!f.scenario_text.empty()) {
    sc = io::load_serving_scenario_from_string(f.scenario_text, f.scenario);
  } else if (!f.scenario.empty()) {
    sc = io::load_serving_scenario(f.scenario);
  }
  ServeConfig c;
  c.scenario_text = sc.text;
  c.engine = resolve_engine(f.engine, f.given, sc, origins);
  Resolver rs(f, sc, origins);
  const auto seed = static_cast<std::uint64_t>(c.engine.seed);
  c.trace = resolve_workload(f, sc, seed, rs);

  serving::ServingSetup& s = c.setup;
  s.seed = seed;
  s.num_replicas = static_cast<std::int32_t>(
      rs.value("replicas", "--replicas", f.replicas, sc.replicas, std::int64_t{1}));
  if (s.num_replicas < 1 || s.num_replicas > 4096) {
    rs.report().error("--replicas", fmt::format("must be in [1, 4096], got {}", s.num_replicas));
  }
  s.scheduler = rs.value<std::string>("scheduler", "--scheduler", f.scheduler, sc.scheduler, "vllm");
  s.router = rs.value<std::string>("router", "--router", f.router, sc.router, "round-robin");
  const auto preemption = rs.value<std::string>("preemption", "--preemption", f.preemption,
                                                sc.preemption, "recompute");
  if (const auto parsed = serving::preemption_mode_from_string(preemption)) {
    s.replica.limits.preemption = *parsed;
  } else {
    rs.report().error("--preemption",
                      fmt::format("'{}': expected {}", preemption,
                                  join_names(serving::kPreemptionModes, ", ", " or ")));
  }
  s.replica.limits.chunk_size =
      rs.value("chunk_size", "--chunk-size", f.chunk_size, sc.chunk_size, std::int64_t{512});
  s.replica.limits.enable_chunked_prefill =
      rs.value("enable_chunked_prefill", "--enable-chunked-prefill", f.chunked_prefill,
               sc.enable_chunked_prefill, true);
  c.enable_prefix_caching = rs.value("enable_prefix_caching", "--enable-prefix-caching",
                                     f.prefix_caching, sc.enable_prefix_caching, true);
  if (!f.given.given("--swap-space") && sc.swap_space) {
    origins.from_scenario("--swap-space", sc.swap_space->field, sc.swap_space->where);
    c.swap_space = sc.swap_space->value;
  } else {
    try {
      c.swap_space = parse_bytes(f.swap_space);
    } catch (const std::exception& e) {
      rs.report().error("--swap-space", e.what());
    }
  }
  s.timeseries_interval =
      rs.duration("timeseries_interval", "--timeseries-interval", f.timeseries_interval,
                  sc.timeseries_interval)
          .value_or(Duration::zero());
  s.slo.ttft = rs.duration("slo_ttft", "--slo-ttft", f.slo_ttft, sc.slo_ttft);
  s.slo.tpot = rs.duration("slo_tpot", "--slo-tpot", f.slo_tpot, sc.slo_tpot);
  s.slo.e2e = rs.duration("slo_e2e", "--slo-e2e", f.slo_e2e, sc.slo_e2e);

  ValidationReport report = rs.report();
  c.trace.validate(report, "workload");
  rs.relocate_workload(report);
  origins.relocate(report);
  throw_if_errors(report);
  return c;
}

void add_serve_flags(CLI::App& cmd, ServeFlags& f) {
  auto add = [&](const std::string& name, auto& target, const std::string& help,
                 const std::string& group) {
    CLI::Option* o = cmd.add_option(name, target, help)->group(group);
    f.given.options[name] = o;
    return o;
  };
  cmd.add_option("scenario", f.scenario, "Scenario file (TOML); flags override it")
      ->check(CLI::ExistingFile);
  add_engine_flags(cmd, f.engine, f.given);
  const std::string w = "Workload";
  add("--trace", f.trace, "Replay a trace file (Azure CSV, Mooncake JSONL, or "
      "arrival_s,prompt_tokens,output_tokens CSV)", w);
  add("--trace-format", f.trace_format, std::string(names_list<serving::kTraceFormats>()), w);
  add("--on-malformed", f.on_malformed,
      names_or(serving::kMalformedRowPolicies, serving::MalformedRowPolicy::kError, "default") +
          " malformed trace rows (counted and reported)",
      w);
  add("--synthetic", f.synthetic,
      fmt::format("Without --trace: azure-conv (fitted to the Azure 2023 conversation trace), {}",
                  names_list<serving::kArrivalProcesses>()),
      w);
  add("--rate", f.rate, "Synthetic arrival rate, requests per second", w);
  add("--cv", f.cv, "Gamma arrivals: coefficient of variation of the gaps", w);
  add("--num-requests", f.num_requests, "Synthetic requests to generate", w);
  add("--duration", f.duration, "Synthetic: stop generating after this long (e.g. 60s)", w);
  add("--prompt-tokens", f.prompt_tokens, "Synthetic prompt lengths, e.g. fixed:512, "
      "uniform:100:2000, lognormal:mean=1155,median=1020, zipf:1.1:1:4096, trace:FILE", w);
  add("--output-tokens", f.output_tokens, "Synthetic output lengths (same forms)", w);
  add("--prefix-groups", f.prefix_groups, "Synthetic shared prefixes: number of groups", w);
  add("--prefix-tokens", f.prefix_tokens, "Synthetic shared prefixes: tokens per prefix", w);
  add("--time-scale", f.time_scale, "Replay k times faster (arrival / k)", w);
  add("--window-start", f.window_start, "Take requests from this trace time (e.g. 600s)", w);
  add("--window-end", f.window_end, "... up to this trace time", w);
  add("--max-requests", f.max_requests, "Stop after this many requests", w);
  add("--max-prompt-tokens", f.max_prompt_tokens, "Cap prompt lengths (counted)", w);
  add("--max-output-tokens", f.max_output_tokens, "Cap output lengths (counted)", w);
  add("--max-total-tokens", f.max_total_tokens, "Drop requests longer than this (counted)", w);
  const std::string s = "Serving";
  add("--replicas", f.replicas, "Independent model replicas behind the router", s);
  add("--scheduler", f.scheduler, "vllm, sarathi, static (see `vramsim list policies`)", s);
  add("--router", f.router, "round-robin, least-outstanding-tokens, prefix-aware", s);
  add("--preemption", f.preemption,
      names_or(serving::kPreemptionModes, serving::PreemptionMode::kRecompute, "vLLM V1"), s);
  add("--chunk-size", f.chunk_size, "sarathi: tokens per step", s);
  add("--swap-space", f.swap_space, "Host memory per replica for swapped KV (e.g. 4GiB)", s);
  add("--timeseries-interval", f.timeseries_interval,
      "Sample the time series at most this often per replica (0s: every step)", s);
  f.given.options["--enable-prefix-caching"] =
      cmd.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", f.prefix_caching,
                   "Reuse cached KV blocks of shared prefixes (on by default, as vLLM V1)")
          ->group(s);
  f.given.options["--enable-chunked-prefill"] =
      cmd.add_flag("--enable-chunked-prefill,!--no-enable-chunked-prefill", f.chunked_prefill,
                   "Split long prompts over steps (on by default, as vLLM V1)")
          ->group(s);
  const std::string o = "Objectives (goodput)";
  add("--slo-ttft", f.slo_ttft, "Time to first token objective, e.g. 2s", o);
  add("--slo-tpot", f.slo_tpot, "Time per output token objective, e.g. 100ms", o);
  add("--slo-e2e", f.slo_e2e, "End-to-end latency objective", o);
  cmd.add_option("--out", f.out, "Write an HDF5 results file (see analysis/SCHEMA.md)");
  add_format_option(cmd, f.format);
}

}  // namespace vramsim::cli
