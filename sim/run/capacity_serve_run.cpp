#include "sim/run/capacity_serve_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"

namespace vramsim::run {
namespace {

// Searching above this many requests per second means the SLOs never bind.
constexpr double kMaxRate = 1e6;
constexpr double kMinRate = 1e-4;

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
  r.max_concurrency = s.config.setup.clients.max_concurrency;
  r.meets = (!a.ttft_p99 || r.ttft_p99.seconds() <= a.ttft_p99->seconds()) &&
            (!a.tpot_p99 || r.tpot_p99.seconds() <= a.tpot_p99->seconds()) &&
            (!a.e2e_p99 || r.e2e_p99.seconds() <= a.e2e_p99->seconds()) && m.num_finished > 0;
  return r;
}

class Prober {
 public:
  Prober(ServeConfig base, const CapacityServeAnswer& a, double trace_rate,
         std::function<void(const CapacityRun&)> on_run)
      : base_(std::move(base)), a_(a), trace_rate_(trace_rate), on_run_(std::move(on_run)) {}

  CapacityRun run(double rate, std::int64_t max_num_seqs = 0) {
    ServeConfig c = base_;
    if (c.trace.kind == serving::TraceKind::kSynthetic) {
      c.trace.synthetic.arrivals.rate_per_s = rate;
    } else {
      c.trace.transforms.time_scale = base_.trace.transforms.time_scale * rate / trace_rate_;
    }
    return simulate(std::move(c), max_num_seqs, rate);
  }

  // The workload as it is, with `clients` clients (see CapacitySearch::max_concurrency_cap).
  CapacityRun run_clients(std::int64_t clients, std::int64_t max_num_seqs = 0) {
    ServeConfig c = base_;
    serving::ClientLoop& loop = c.setup.clients;
    if (!loop.closed()) loop.send_all_at_start = true;
    loop.max_concurrency = static_cast<std::int32_t>(clients);
    CapacityRun r = simulate(std::move(c), max_num_seqs, 0.0);
    const double d = last_.result.duration_s();
    r.rate_per_s = d > 0 ? static_cast<double>(last_.result.metrics.num_finished) / d : 0.0;
    return r;
  }
  const ServeAnswer& last() const { return last_; }

 private:
  CapacityRun simulate(ServeConfig c, std::int64_t max_num_seqs, double rate) {
    if (max_num_seqs > 0) c.engine.max_num_seqs = max_num_seqs;
    ServeAnswer s = prepare_serve(std::move(c));
    if (!s.feasible) throw ConfigError("model.id", "infeasible: " + s.budget.result.reason);
    CapacityRun r = evaluate(s, a_, rate);
    last_ = std::move(s);
    if (on_run_) on_run_(r);
    return r;
  }

  ServeConfig base_;
  const CapacityServeAnswer& a_;
  double trace_rate_;
  std::function<void(const CapacityRun&)> on_run_;
  ServeAnswer last_;
};

// Fills the answer's run record (model, GPU, workload, seed) from the search's runs.
void describe(const Prober& prober, const CapacitySearch& f, CapacityServeAnswer& a) {
  a.model = prober.last().budget.model.name;
  a.gpu = prober.last().budget.device.id;
  a.cost_model = prober.last().cost_model;
  a.scenario_text = f.base.scenario_text;
  a.seed = f.base.setup.seed;
}

// The client-count axis: 1, 2, 4, ... (the cap last) until a count misses, then bisection over
// the integers between the last count that met and the first that missed.
// NOTE: like the rate search, this assumes that more clients never lower the p99 latencies.
void search_clients(const CapacitySearch& f, CapacityServeAnswer& a) {
  Prober prober(f.base, a, 1.0, f.on_run);
  const auto probe = [&](std::int64_t n) {
    a.runs.push_back(prober.run_clients(n));
    if (a.runs.size() == 1) {
      a.workload = prober.last().trace_description;
      a.first_run = prober.last();
    }
    return a.runs.back().meets;
  };
  const auto budget_left = [&] { return static_cast<int>(a.runs.size()) < f.max_runs; };
  const std::int64_t cap = f.max_concurrency_cap;
  std::int64_t low = 0;   // meets (0: none yet)
  std::int64_t high = 0;  // misses (0: none yet)
  for (std::int64_t n = 1; budget_left(); n = std::min(2 * n, cap)) {
    if (!probe(n)) {
      high = n;
      break;
    }
    low = n;
    if (n == cap) break;
  }
  while (low > 0 && high > low + 1 && budget_left()) {
    const std::int64_t mid = low + (high - low) / 2;
    if (probe(mid)) low = mid; else high = mid;
  }
  a.concurrency_low = low;
  a.concurrency_high = high;
  a.max_concurrency = low;
  describe(prober, f, a);
  if (low == 0) {
    a.note = "the SLOs are not met even with one client";
  } else if (high == 0 && low == cap) {
    a.note = fmt::format("every client count up to the cap ({}) meets the SLOs", cap);
  } else if (high == 0 || high > low + 1) {
    a.note = fmt::format("stopped after {} runs before the bracket closed", a.runs.size());
  }
  if (f.search_max_num_seqs && low > 0) {
    double best = -1.0;
    for (std::int64_t seqs = 8; seqs <= 2048; seqs *= 2) {
      a.seq_runs.push_back(prober.run_clients(low, seqs));
      const CapacityRun& r = a.seq_runs.back();
      if (r.goodput_per_s > best) {
        best = r.goodput_per_s;
        a.best_max_num_seqs = seqs;
      }
    }
  }
}

}  // namespace

std::string_view to_string(CapacityAxis axis) {
  switch (axis) {
    case CapacityAxis::kRate: return "rate";
    case CapacityAxis::kMaxConcurrency: return "max_concurrency";
  }
  VRAMSIM_UNREACHABLE("invalid CapacityAxis");
}

CapacityServeAnswer capacity_serve(const CapacitySearch& given) {
  // Every run of the search prepares the same layout: a disaggregated one reads its KV link's
  // topology once for all of them (KvLinkTopologies), unless the caller shares one already.
  CapacitySearch f = given;
  if (f.base.disaggregated && !f.base.disaggregated->link_topologies) {
    f.base.disaggregated->link_topologies = std::make_shared<KvLinkTopologies>();
  }
  ValidationReport report;
  const auto positive = [&](const std::optional<Duration>& d, const char* field) {
    if (d && *d <= Duration::zero()) report.error(field, "must be > 0");
  };
  positive(f.ttft_p99, "capacity.slo_ttft_p99");
  positive(f.tpot_p99, "capacity.slo_tpot_p99");
  positive(f.e2e_p99, "capacity.slo_e2e_p99");
  if (!f.ttft_p99 && !f.tpot_p99 && !f.e2e_p99) {
    report.error("capacity.slo", "give at least one objective: a p99 TTFT, TPOT or E2E target");
  }
  if (!(f.precision > 0.0 && f.precision < 1.0)) {
    report.error("capacity.precision", fmt::format("must be in (0, 1), got {}", f.precision));
  }
  if (f.max_runs < 2) report.error("capacity.max_runs", "must be >= 2");
  if (f.axis == CapacityAxis::kMaxConcurrency &&
      !(f.max_concurrency_cap >= 1 &&
        f.max_concurrency_cap <= std::numeric_limits<std::int32_t>::max())) {
    report.error("capacity.max_concurrency_cap",
                 fmt::format("must be in [1, {}], got {}",
                             std::numeric_limits<std::int32_t>::max(), f.max_concurrency_cap));
  }
  if (f.axis == CapacityAxis::kRate && f.base.setup.clients.send_all_at_start) {
    // NOTE: closed loop (--max-concurrency without --rate) sends every request at once, so the
    // rate this search varies would change nothing; a search over the concurrency is not built,
    // so it is refused rather than answered with a meaningless rate.
    report.error("workload.max_concurrency",
                 "capacity serve searches the arrival rate, and a closed loop (max_concurrency "
                 "without a rate) has none; give a rate to cap an open-loop stream, or search "
                 "the client count (--max-concurrency-search)");
  }
  throw_if_errors(report);

  CapacityServeAnswer a;
  a.axis = f.axis;
  a.ttft_p99 = f.ttft_p99;
  a.tpot_p99 = f.tpot_p99;
  a.e2e_p99 = f.e2e_p99;
  const ServeConfig& base = f.base;
  if (f.axis == CapacityAxis::kMaxConcurrency) {
    search_clients(f, a);
    return a;
  }
  // The probe at the workload's own rate: for a trace this measures that rate.
  double trace_rate = 1.0;
  double start = base.trace.synthetic.arrivals.rate_per_s;
  if (base.trace.kind == serving::TraceKind::kFile) {
    ServeAnswer probe = prepare_serve(base);
    if (!probe.feasible) throw ConfigError("model.id", "infeasible: " + probe.budget.result.reason);
    a.trace_probe = evaluate(probe, a, 0.0);
    trace_rate = probe.result.arrival_rate_per_s();
    a.trace_probe->rate_per_s = trace_rate;
    if (!(trace_rate > 0.0)) {
      throw ConfigError("workload.trace", "the trace's arrivals span no time: its rate cannot be scaled");
    }
    start = trace_rate;
  }
  Prober prober(base, a, trace_rate, f.on_run);
  const auto probe = [&](double rate) {
    a.runs.push_back(prober.run(rate));
    if (a.runs.size() == 1) {
      a.workload = prober.last().trace_description;
      a.first_run = prober.last();
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
  describe(prober, f, a);
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

}  // namespace vramsim::run
