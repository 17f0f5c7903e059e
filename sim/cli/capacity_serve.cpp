#include "sim/cli/capacity_serve.hpp"

#include "sim/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace vramsim::cli {
namespace {

// Searching above this many requests per second means the SLOs never bind.
constexpr double kMaxRate = 1e6;
constexpr double kMinRate = 1e-4;

std::optional<Duration> parse_slo(const std::string& text, const std::string& flag,
                                  ValidationReport& report) {
  if (text.empty()) return std::nullopt;
  try {
    const Duration d = parse_duration(text);
    if (d <= Duration::zero()) report.error(flag, "must be > 0");
    return d;
  } catch (const std::exception& e) {
    report.error(flag, e.what());
    return std::nullopt;
  }
}

// Simulates a prepared configuration and measures it against the SLOs of `a`.
CapacityRun evaluate(ServeAnswer& s, const CapacityServeAnswer& a, double rate) {
  simulate_serve(s, nullptr);
  const auto& m = s.result.metrics;
  CapacityRun r;
  r.rate_per_s = rate;
  r.max_num_seqs = s.budget.engine.max_num_seqs;
  r.ttft_p99 = m.ttft.quantile(0.99);
  r.tpot_p99 = m.tpot.quantile(0.99);
  r.e2e_p99 = m.e2e.quantile(0.99);
  const double d = s.result.duration_s();
  r.goodput_per_s = d > 0 ? static_cast<double>(m.num_good) / d : 0.0;
  r.meets = (!a.ttft_p99 || r.ttft_p99.seconds() <= a.ttft_p99->seconds()) &&
            (!a.tpot_p99 || r.tpot_p99.seconds() <= a.tpot_p99->seconds()) &&
            (!a.e2e_p99 || r.e2e_p99.seconds() <= a.e2e_p99->seconds()) && m.num_finished > 0;
  return r;
}

class Prober {
 public:
  Prober(ServeConfig base, const Origins& origins, const CapacityServeAnswer& a, double trace_rate)
      : base_(std::move(base)), origins_(origins), a_(a), trace_rate_(trace_rate) {}

  CapacityRun run(double rate, std::int64_t max_num_seqs = 0) {
    ServeConfig c = base_;
    if (c.trace.kind == serving::TraceKind::kSynthetic) {
      c.trace.synthetic.arrivals.rate_per_s = rate;
    } else {
      c.trace.transforms.time_scale = base_.trace.transforms.time_scale * rate / trace_rate_;
    }
    if (max_num_seqs > 0) c.engine.max_num_seqs = max_num_seqs;
    ServeAnswer s = prepare_serve(std::move(c), origins_);
    if (!s.feasible) throw ConfigError("--model", "infeasible: " + s.budget.result.reason);
    CapacityRun r = evaluate(s, a_, rate);
    last_ = std::move(s);
    return r;
  }
  const ServeAnswer& last() const { return last_; }

 private:
  ServeConfig base_;
  const Origins& origins_;
  const CapacityServeAnswer& a_;
  double trace_rate_;
  ServeAnswer last_;
};

}  // namespace

CapacityServeAnswer capacity_serve(const CapacityServeFlags& f) {
  CapacityServeAnswer a;
  ValidationReport report;
  a.ttft_p99 = parse_slo(f.slo_ttft_p99, "--slo-ttft-p99", report);
  a.tpot_p99 = parse_slo(f.slo_tpot_p99, "--slo-tpot-p99", report);
  a.e2e_p99 = parse_slo(f.slo_e2e_p99, "--slo-e2e-p99", report);
  if (f.slo_ttft_p99.empty() && f.slo_tpot_p99.empty() && f.slo_e2e_p99.empty()) {
    report.error("--slo-ttft-p99", "give at least one objective: --slo-ttft-p99, "
                                   "--slo-tpot-p99 or --slo-e2e-p99 (e.g. 2s, 100ms)");
  }
  if (!(f.precision > 0.0 && f.precision < 1.0)) {
    report.error("--precision", fmt::format("must be in (0, 1), got {}", f.precision));
  }
  if (f.max_runs < 2) report.error("--max-runs", "must be >= 2");
  throw_if_errors(report);

  Origins origins;
  ServeConfig base = resolve_serve(f.serve, origins);
  // The probe at the workload's own rate: for a trace this measures that rate.
  double trace_rate = 1.0;
  double start = base.trace.synthetic.arrivals.rate_per_s;
  if (base.trace.kind == serving::TraceKind::kFile) {
    ServeAnswer probe = prepare_serve(base, origins);
    if (!probe.feasible) throw ConfigError("--model", "infeasible: " + probe.budget.result.reason);
    a.trace_probe = evaluate(probe, a, 0.0);
    trace_rate = probe.result.arrival_rate_per_s();
    a.trace_probe->rate_per_s = trace_rate;
    if (!(trace_rate > 0.0)) {
      throw ConfigError("--trace", "the trace's arrivals span no time: its rate cannot be scaled");
    }
    start = trace_rate;
  }
  Prober prober(base, origins, a, trace_rate);
  const auto probe = [&](double rate) {
    a.runs.push_back(prober.run(rate));
    if (a.runs.size() == 1) {
      a.workload = prober.last().trace_description;
      a.inputs = serve_json(prober.last())["inputs"];
    }
    return a.runs.back().meets;
  };
  double low = 0.0;
  double high = 0.0;
  if (probe(start)) {
    low = start;
    for (double r = start * 2; r <= kMaxRate && static_cast<int>(a.runs.size()) < f.max_runs;
         r *= 2) {
      if (!probe(r)) {
        high = r;
        break;
      }
      low = r;
    }
  } else {
    high = start;
    for (double r = start / 2; r >= kMinRate && static_cast<int>(a.runs.size()) < f.max_runs;
         r /= 2) {
      if (probe(r)) {
        low = r;
        break;
      }
      high = r;
    }
  }
  if (low > 0.0 && high > 0.0) {
    while ((high - low) / high > f.precision && static_cast<int>(a.runs.size()) < f.max_runs) {
      const double mid = std::sqrt(low * high);  // geometric: rates span decades
      if (probe(mid)) low = mid; else high = mid;
    }
  }
  a.bracket_low = low;
  a.bracket_high = high;
  a.max_rate_per_s = low;
  a.model = prober.last().budget.model.name;
  a.gpu = prober.last().budget.device.id;
  a.cost_model = prober.last().cost_model;
  a.scenario_text = base.scenario_text;
  a.seed = base.setup.seed;
  if (low == 0.0) {
    a.note = fmt::format("the SLOs are not met even at {:.4g} requests/s", high);
  } else if (high == 0.0) {
    a.note = "no failing rate found below the search cap: the SLOs never bind";
  } else if ((high - low) / high > f.precision) {
    a.note = fmt::format("stopped after {} runs before reaching the precision", a.runs.size());
  }
  if (f.search_max_num_seqs && low > 0.0) {
    double best = -1.0;
    for (std::int64_t seqs = 8; seqs <= 2048; seqs *= 2) {
      a.seq_runs.push_back(prober.run(low, seqs));
      const CapacityRun& r = a.seq_runs.back();
      if (r.goodput_per_s > best) {
        best = r.goodput_per_s;
        a.best_max_num_seqs = seqs;
      }
    }
  }
  return a;
}

nlohmann::ordered_json capacity_serve_json(const CapacityServeAnswer& a) {
  nlohmann::ordered_json j;
  j["mode"] = "serve";
  j["model"] = a.model;
  j["gpu"] = a.gpu;
  j["workload"] = a.workload;
  if (a.ttft_p99) j["slo_ttft_p99_s"] = a.ttft_p99->seconds();
  if (a.tpot_p99) j["slo_tpot_p99_s"] = a.tpot_p99->seconds();
  if (a.e2e_p99) j["slo_e2e_p99_s"] = a.e2e_p99->seconds();
  j["max_rate_requests_per_s"] = a.max_rate_per_s;
  j["bracket_low_requests_per_s"] = a.bracket_low;
  j["bracket_high_requests_per_s"] = a.bracket_high;
  j["num_runs"] = a.runs.size() + a.seq_runs.size();
  j["num_simulations"] = a.num_simulations();
  if (!a.note.empty()) j["note"] = a.note;
  const auto rows = [](const std::vector<CapacityRun>& runs) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const CapacityRun& r : runs) {
      list.push_back({{"rate_requests_per_s", r.rate_per_s}, {"max_num_seqs", r.max_num_seqs},
                      {"meets_slo", r.meets}, {"ttft_p99_s", r.ttft_p99.seconds()},
                      {"tpot_p99_s", r.tpot_p99.seconds()}, {"e2e_p99_s", r.e2e_p99.seconds()},
                      {"goodput_requests_per_s", r.goodput_per_s}});
    }
    return list;
  };
  j["runs"] = rows(a.runs);
  if (!a.seq_runs.empty()) {
    j["best_max_num_seqs"] = a.best_max_num_seqs;
    j["max_num_seqs_runs"] = rows(a.seq_runs);
  }
  return j;
}

std::string capacity_serve_table(const CapacityServeAnswer& a) {
  std::string out = fmt::format("{} on {}; workload shape: {}\n", a.model, a.gpu, a.workload);
  out += fmt::format("{:>14}{:>10}{:>12}{:>12}{:>12}{:>12}  {}\n", "rate (req/s)", "max_seqs",
                     "TTFT p99", "TPOT p99", "E2E p99", "goodput", "SLOs");
  const auto print = [&](const std::vector<CapacityRun>& runs) {
    for (const CapacityRun& r : runs) {
      out += fmt::format("{:>14.4f}{:>10}{:>12.4f}{:>12.4f}{:>12.3f}{:>12.3f}  {}\n", r.rate_per_s,
                         r.max_num_seqs, r.ttft_p99.seconds(), r.tpot_p99.seconds(),
                         r.e2e_p99.seconds(), r.goodput_per_s,
                         r.meets ? "met" : "missed");
    }
  };
  print(a.runs);
  out += fmt::format("\nLargest rate meeting the SLOs: {:.4f} requests/s (bracket [{:.4f}, {}], "
                     "{} runs)\n",
                     a.max_rate_per_s, a.bracket_low,
                     a.bracket_high > 0 ? fmt::format("{:.4f}", a.bracket_high) : "none",
                     a.runs.size());
  if (!a.note.empty()) out += fmt::format("Note: {}\n", a.note);
  if (!a.seq_runs.empty()) {
    out += fmt::format("\nmax_num_seqs at {:.4f} requests/s:\n", a.max_rate_per_s);
    print(a.seq_runs);
    out += fmt::format("Best goodput with --max-num-seqs {}\n", a.best_max_num_seqs);
  }
  return out;
}

}  // namespace vramsim::cli
