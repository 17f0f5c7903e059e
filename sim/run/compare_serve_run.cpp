#include "sim/run/compare_serve_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/core/error.hpp"

namespace vramsim::run {
namespace {

double p99(const serving::LatencyHistogram& h) { return h.quantile(0.99).seconds(); }

ServeCandidate run_option(std::string name, int num_gpus, ServeConfig config) {
  ServeCandidate o;
  o.name = std::move(name);
  o.num_gpus = num_gpus;
  try {
    o.answer = prepare_serve(std::move(config));
  } catch (const ConfigError& e) {
    // A split the model does not allow (TP that does not divide the heads, PP beyond the
    // layers) is an answer for this option, not an input error.
    o.reason = e.report().problems().empty() ? e.what() : e.report().problems().front().message;
    return o;
  }
  if (!o.answer.feasible) {
    o.reason = o.answer.budget.result.reason;
    return o;
  }
  simulate_serve(o.answer, nullptr);
  o.feasible = true;
  return o;
}

std::string link_name(const hardware::DeviceSpec& d) {
  if (d.peer_link && !d.peer_link->bridge_only) {
    return d.peer_link->kind == hardware::PeerLinkKind::kNvlink ? "NVLink" : "Infinity Fabric";
  }
  return "PCIe";
}

std::string verdict(const CompareServeAnswer& c, const std::string& gpu) {
  const ServeCandidate& base = c.options.front();
  std::vector<const ServeCandidate*> multi;
  for (const ServeCandidate& o : c.options) {
    if (o.feasible && o.num_gpus > 1) multi.push_back(&o);
  }
  if (multi.empty()) return fmt::format("no option with {} GPUs could run", c.options.back().num_gpus);
  const ServeCandidate* best = *std::max_element(multi.begin(), multi.end(), [](auto* a, auto* b) {
    return goodput_requests_per_s(a->answer) < goodput_requests_per_s(b->answer) ||
           (goodput_requests_per_s(a->answer) == goodput_requests_per_s(b->answer) &&
            p99(a->answer.result.metrics.ttft) > p99(b->answer.result.metrics.ttft));
  });
  const int n = best->num_gpus;
  if (!base.feasible) {
    return fmt::format("the model does not fit one {} ({}); with {}: {} runs best, goodput "
                       "{:.2f} requests/s, p99 TTFT {:.3f} s",
                       gpu, base.reason, n, best->name, goodput_requests_per_s(best->answer),
                       p99(best->answer.result.metrics.ttft));
  }
  const auto& bm = base.answer.result.metrics;
  const bool base_meets_all = bm.num_good == bm.num_arrived;
  const ServeCandidate* fastest = *std::min_element(multi.begin(), multi.end(), [](auto* a, auto* b) {
    return p99(a->answer.result.metrics.ttft) < p99(b->answer.result.metrics.ttft);
  });
  const double ttft_gain = p99(bm.ttft) / std::max(1e-12, p99(fastest->answer.result.metrics.ttft));
  // Tensor parallelism that makes requests slower than one GPU does (all-reduces over a slow
  // link outweighing the split matmuls) is worth saying whatever the rest of the verdict is.
  std::string tp_note;
  for (const ServeCandidate* o : multi) {
    if (o->name.rfind("TP=", 0) != 0) continue;
    const auto& om = o->answer.result.metrics;
    if (p99(om.ttft) > p99(bm.ttft) || p99(om.tpot) > p99(bm.tpot)) {
      tp_note = fmt::format("; {} over {} makes the slowest requests slower than one GPU does "
                            "(p99 TTFT {:.3f} s against {:.3f} s, p99 TPOT {:.4f} s against "
                            "{:.4f} s)",
                            o->name, c.link, p99(om.ttft), p99(bm.ttft), p99(om.tpot),
                            p99(bm.tpot));
    }
  }
  if (base_meets_all) {
    return fmt::format("one {} already serves this traffic within the SLOs (all {} requests, "
                       "goodput {:.2f} requests/s), so a second GPU does not raise goodput; it "
                       "only cuts latency: {} brings p99 TTFT from {:.3f} s to {:.3f} s ({:.2f}x)",
                       gpu, bm.num_arrived, goodput_requests_per_s(base.answer), fastest->name, p99(bm.ttft),
                       p99(fastest->answer.result.metrics.ttft), ttft_gain) +
           tp_note;
  }
  if (best->speedup < 1.05) {
    return fmt::format("a second {} over {} does not help this traffic: the best option, {}, "
                       "gives {:.2f}x the goodput of one GPU",
                       gpu, c.link, best->name, best->speedup) +
           tp_note;
  }
  const auto share = [](const ServeAnswer& a) {
    const auto& m = a.result.metrics;
    return m.num_arrived > 0 ? 100.0 * static_cast<double>(m.num_good) /
                                   static_cast<double>(m.num_arrived)
                             : 0.0;
  };
  std::string v = fmt::format("a second {} over {} helps: one GPU keeps only {:.0f}% of the "
                              "requests within the SLOs ({:.2f} requests/s); {} gives {:.2f}x that "
                              "goodput ({:.2f} requests/s, {:.0f}% within the SLOs)",
                              gpu, c.link, share(base.answer), goodput_requests_per_s(base.answer), best->name,
                              best->speedup, goodput_requests_per_s(best->answer), share(best->answer));
  for (const ServeCandidate* o : multi) {
    if (o == best || o->name.rfind("TP=", 0) != 0) continue;
    const double t = p99(bm.ttft) / std::max(1e-12, p99(o->answer.result.metrics.ttft));
    v += fmt::format("; {} gives {:.2f}x and {} p99 TTFT ({:.2f}x)", o->name, o->speedup,
                     t >= 1.0 ? "cuts" : "raises", t >= 1.0 ? t : 1.0 / t);
  }
  return v + (best->name.rfind("TP=", 0) == 0 ? "" : tp_note);
}

}  // namespace

double goodput_requests_per_s(const ServeAnswer& a) {
  const double d = a.result.duration_s();
  return d > 0.0 ? static_cast<double>(a.result.metrics.num_good) / d : 0.0;
}

double output_tokens_per_s(const ServeAnswer& a) {
  const double d = a.result.duration_s();
  return d > 0.0 ? static_cast<double>(a.result.metrics.num_output_tokens) / d : 0.0;
}

serving::SloSpec default_serving_slo() {
  serving::SloSpec s;
  s.ttft = seconds(2);
  s.tpot = milliseconds(100);
  return s;
}

CompareServeAnswer compare_serve(const CompareServe& q) {
  ValidationReport report;
  if (q.num_gpus < 2 || q.num_gpus > 64) {
    report.error("compare.num_gpus", fmt::format("must be in [2, 64], got {}", q.num_gpus));
  }
  if (q.price_per_gpu_hour &&
      !(*q.price_per_gpu_hour > 0.0 && std::isfinite(*q.price_per_gpu_hour))) {
    report.error("compare.price_per_gpu_hour", "must be > 0 and finite");
  }
  throw_if_errors(report);
  ServeConfig base = q.base;
  CompareServeAnswer c;
  c.price_per_gpu_hour = q.price_per_gpu_hour;
  if (!base.setup.slo.any()) {
    base.setup.slo = default_serving_slo();
    c.default_slo = true;
  }
  c.slo = base.setup.slo;
  base.engine.tp = 1;
  base.engine.pp = 1;
  base.setup.num_replicas = 1;
  const int n = q.num_gpus;
  c.options.push_back(run_option("1 GPU", 1, base));

  ServeConfig tp = base;
  tp.engine.tp = n;
  c.options.push_back(run_option(fmt::format("TP={}", n), n, tp));
  ServeConfig pp = base;
  pp.engine.pp = n;
  c.options.push_back(run_option(fmt::format("PP={}", n), n, pp));
  ServeConfig replicas = base;
  replicas.setup.num_replicas = n;
  if (replicas.setup.router == "round-robin") replicas.setup.router = "least-outstanding-tokens";
  c.options.push_back(run_option(fmt::format("{} replicas", n), n, replicas));
  const ServeCandidate& one = c.options.front();
  if (one.feasible) {
    // vLLM's limits times N on the same GPU: only worth it if the KV cache holds the batch.
    ServeConfig big = base;
    big.engine.max_num_seqs = one.answer.budget.engine.max_num_seqs * n;
    big.engine.max_num_batched_tokens = one.answer.budget.engine.max_num_batched_tokens * n;
    c.options.push_back(run_option(fmt::format("1 GPU, {}x batch", n), 1, big));
  }
  // NOTE: the push_back above may reallocate: `one` is dangling from here (AddressSanitizer
  // caught the heap-use-after-free); read the first option afresh.
  const ServeCandidate& first = c.options.front();
  c.link =
      link_name(first.feasible ? first.answer.budget.device : c.options[1].answer.budget.device);
  const double base_goodput = first.feasible ? goodput_requests_per_s(first.answer) : 0.0;
  for (ServeCandidate& o : c.options) {
    if (!o.feasible || base_goodput <= 0.0) continue;
    o.speedup = goodput_requests_per_s(o.answer) / base_goodput;
    o.scaling_efficiency = o.speedup / o.num_gpus;
  }
  std::string gpu = base.engine.gpu_id;
  for (const ServeCandidate& o : c.options) {
    if (!o.answer.budget.device.id.empty()) {
      gpu = o.answer.budget.device.name;
      break;
    }
  }
  c.verdict = verdict(c, gpu);
  return c;
}

}  // namespace vramsim::run
