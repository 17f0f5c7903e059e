#include "sim/cli/capacity_serve.hpp"
#include "sim/cli/progress_bar.hpp"

#include "sim/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace vramsim::cli {
namespace {

std::optional<Duration> parse_slo(const std::string& text, const std::string& flag,
                                  ValidationReport& report) {
  if (text.empty()) return std::nullopt;
  try {
    return parse_duration(text);
  } catch (const std::exception& e) {
    report.error(flag, e.what());
    return std::nullopt;
  }
}

}  // namespace

CapacityServeAnswer capacity_serve(const CapacityServeFlags& f) {
  run::CapacitySearch search;
  ValidationReport report;
  search.ttft_p99 = parse_slo(f.slo_ttft_p99, "--slo-ttft-p99", report);
  search.tpot_p99 = parse_slo(f.slo_tpot_p99, "--slo-tpot-p99", report);
  search.e2e_p99 = parse_slo(f.slo_e2e_p99, "--slo-e2e-p99", report);
  throw_if_errors(report);
  search.precision = f.precision;
  search.max_runs = f.max_runs;
  search.search_max_num_seqs = f.search_max_num_seqs;
  search.max_concurrency_cap = f.max_concurrency_cap;
  const run::ServeOptions o = resolve_serve(f.serve);
  if (f.search_max_concurrency) {
    search.axis = run::CapacityAxis::kMaxConcurrency;
    if (o.max_concurrency) {
      report.error("--max-concurrency-search",
                   "searches the client count: leave --max-concurrency (workload."
                   "max_concurrency) out; --max-concurrency-cap bounds the search");
    }
  }
  throw_if_errors(report);
  // The client search configures the workload as `serve --max-concurrency` would (closed loop;
  // with --rate or --trace-arrivals a capped open-loop stream; the same checks), one client to
  // begin with: the search sets the count of each run.
  run::ServeOptions clients = o;
  if (f.search_max_concurrency) clients.max_concurrency = 1;
  search.base = on_flags(clients, [&] { return run::serve_config(clients); });
  static constexpr FlagForPath kFlags[] = {
      {"capacity.slo", "--slo-ttft-p99",
       " (--slo-ttft-p99, --slo-tpot-p99 or --slo-e2e-p99, e.g. 2s, 100ms)"},
      {"capacity.slo_ttft_p99", "--slo-ttft-p99", ""},
      {"capacity.slo_tpot_p99", "--slo-tpot-p99", ""},
      {"capacity.slo_e2e_p99", "--slo-e2e-p99", ""},
      {"capacity.precision", "--precision", ""},
      {"capacity.max_runs", "--max-runs", ""},
      {"capacity.max_concurrency_cap", "--max-concurrency-cap", ""},
  };
  // Each simulation of the search on stderr once it takes a while (progress_bar.hpp).
  ProgressLine progress("capacity serve", 1.0);
  std::size_t runs = 0;
  search.on_run = [&](const run::CapacityRun& r) {
    ++runs;
    progress.show(fmt::format("run {} of at most {}: {} {}", runs, search.max_runs,
                              r.max_concurrency > 0 && search.axis ==
                                                           run::CapacityAxis::kMaxConcurrency
                                  ? fmt::format("{} clients", r.max_concurrency)
                                  : fmt::format("{:.4g} requests/s", r.rate_per_s),
                              r.meets ? "meets the SLOs" : "misses"));
  };
  return on_flags(o, [&] { return run::capacity_serve(search); }, kFlags);
}

std::string capacity_serve_table(const CapacityServeAnswer& a) {
  const bool clients = a.axis == run::CapacityAxis::kMaxConcurrency;
  std::string out = fmt::format("{} on {}; workload shape: {}\n", a.model, a.gpu, a.workload);
  out += fmt::format("{}{:>14}{:>10}{:>12}{:>12}{:>12}{:>12}  {}\n",
                     clients ? fmt::format("{:>9}  ", "clients") : "",
                     clients ? "achieved req/s" : "rate (req/s)", "max_seqs", "TTFT p99",
                     "TPOT p99", "E2E p99", "goodput", "SLOs");
  const auto print = [&](const std::vector<CapacityRun>& runs) {
    for (const CapacityRun& r : runs) {
      out += fmt::format("{}{:>14.4f}{:>10}{:>12.4f}{:>12.4f}{:>12.3f}{:>12.3f}  {}\n",
                         clients ? fmt::format("{:>9}  ", r.max_concurrency) : "", r.rate_per_s,
                         r.max_num_seqs, r.ttft_p99.seconds(), r.tpot_p99.seconds(),
                         r.e2e_p99.seconds(), r.goodput_per_s,
                         r.meets ? "met" : "missed");
    }
  };
  print(a.runs);
  if (clients) {
    out += fmt::format("\nLargest client count meeting the SLOs: {} (bracket [{}, {}], {} "
                       "runs)\n",
                       a.max_concurrency, a.concurrency_low,
                       a.concurrency_high > 0 ? fmt::format("{}", a.concurrency_high) : "none",
                       a.runs.size());
    if (!a.note.empty()) out += fmt::format("Note: {}\n", a.note);
    if (!a.seq_runs.empty()) {
      out += fmt::format("\nmax_num_seqs with {} clients:\n", a.max_concurrency);
      print(a.seq_runs);
      out += fmt::format("Best goodput with --max-num-seqs {}\n", a.best_max_num_seqs);
    }
    return out;
  }
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
