#include "sim/run/compare_serve_why.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

namespace vramsim::run::detail {
namespace {

// Every step's time by part (StepSplit's rules, compare_serve_run.hpp).
class SplitListener final : public StepListener {
 public:
  void on_step(const serving::BatchShape& batch, const serving::StepTime& t,
               const serving::ExecutionTimeModel& model) override {
    if (!floor_) {
      serving::BatchShape one;
      one.num_decodes = 1;
      one.decode_context_tokens = 1;
      floor_ = model.step_time(one).linear.seconds();
    }
    StepSplit& s = split;
    ++s.num_steps;
    s.num_prefill_tokens += batch.num_prefill_tokens();
    s.num_decode_tokens += batch.num_decodes;
    const double total = t.total.seconds();
    s.busy_s += total;
    s.communication_s += t.communication.seconds();
    // The GPU's gaps between kernels, a fixed cost of every step like the host's.
    s.overhead_s += (t.overhead + t.kernel_gaps).seconds();
    const double linear = t.linear.seconds();
    (linear <= 1.1 * *floor_ ? s.memory_s : s.compute_s) += linear;
    // The prefill and decode parts alone: their attention (which adds, as separate kernels)
    // and their share of the step.
    double prefill_alone = 0.0;
    double decode_alone = 0.0;
    double prefill_attention = 0.0;
    double decode_attention = 0.0;
    if (!batch.prefills.empty()) {
      serving::BatchShape p;
      p.prefills = batch.prefills;
      const serving::StepTime tp = model.step_time(p);
      prefill_alone = (tp.total - tp.overhead - tp.kernel_gaps).seconds();
      prefill_attention = tp.attention.seconds();
    }
    if (batch.num_decodes > 0) {
      serving::BatchShape d;
      d.num_decodes = batch.num_decodes;
      d.decode_context_tokens = batch.decode_context_tokens;
      const serving::StepTime td = model.step_time(d);
      decode_alone = (td.total - td.overhead - td.kernel_gaps).seconds();
      decode_attention = td.attention.seconds();
    }
    // The step's attention split in the proportion of its parts alone (they add in the model).
    const double attention = t.attention.seconds();
    const double parts = prefill_attention + decode_attention;
    const double prefill_share_of_attention = parts > 0.0 ? prefill_attention / parts : 0.0;
    s.compute_s += attention * prefill_share_of_attention;
    s.memory_s += attention * (1.0 - prefill_share_of_attention);
    const double alone = prefill_alone + decode_alone;
    const double prefill_share = alone > 0.0 ? prefill_alone / alone
                                             : (batch.prefills.empty() ? 0.0 : 1.0);
    s.prefill_s += total * prefill_share;
    s.decode_s += total * (1.0 - prefill_share);
  }
  StepSplit split;

 private:
  std::optional<double> floor_;  // the matmuls of a one-token step: the weights read once
};

// The limits each step starts at, and the requests within the SLOs.
class LimitObserver final : public serving::ServingObserver {
 public:
  LimitObserver(serving::SloSpec slo, std::int64_t max_num_seqs, std::int64_t max_tokens,
                std::int64_t kv_blocks)
      : slo_(slo), max_num_seqs_(max_num_seqs), max_tokens_(max_tokens), kv_blocks_(kv_blocks) {}

  void on_request(const serving::RequestRecord& r) override {
    if (r.status != serving::RequestStatus::kFinished) return;
    // The SLO test of ServingMetrics::on_finish (serving_metrics.cpp), per request.
    const Duration ttft = r.first_token - r.arrival;
    const Duration e2e = r.finish - r.arrival;
    bool good = (!slo_.ttft || ttft <= *slo_.ttft) && (!slo_.e2e || e2e <= *slo_.e2e);
    if (slo_.tpot && r.output_tokens > 1) {
      good = good && Duration::from_nanoseconds((r.finish - r.first_token).nanoseconds() /
                                                (r.output_tokens - 1)) <= *slo_.tpot;
    }
    if (good) good_output_tokens += r.output_tokens;
  }
  void on_sample(const serving::TimeSample& s) override {
    ++num_samples;
    if (s.num_waiting == 0) return;
    ++queued;
    if (max_num_seqs_ > 0 && s.num_running >= max_num_seqs_) ++seq_limited;
    if (max_tokens_ > 0 && s.batch_tokens >= max_tokens_) ++token_limited;
    // NOTE: 95 % full, not 100 %: vLLM keeps a watermark of free blocks.
    if (kv_blocks_ > 0 && 100 * s.kv_used_blocks >= 95 * kv_blocks_) ++kv_full;
  }

  std::int64_t good_output_tokens = 0;
  std::int64_t num_samples = 0, queued = 0, seq_limited = 0, token_limited = 0, kv_full = 0;

 private:
  serving::SloSpec slo_;
  std::int64_t max_num_seqs_, max_tokens_, kv_blocks_;
};

double share(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

void classify(Bottleneck& b, std::int64_t num_requests, std::int64_t max_num_seqs,
              std::int64_t max_tokens) {
  const StepSplit& s = b.split;
  const double busy = std::max(1e-12, s.busy_s);
  const std::string split = fmt::format(
      "step time {:.0f}% prefill / {:.0f}% decode; {:.0f}% compute, {:.0f}% HBM bandwidth, "
      "{:.0f}% communication, {:.0f}% overhead",
      100 * s.prefill_s / busy, 100 * s.decode_s / busy, 100 * s.compute_s / busy,
      100 * s.memory_s / busy, 100 * s.communication_s / busy, 100 * s.overhead_s / busy);
  if (100 * b.num_preemptions > num_requests ||
      (b.queued_share >= 0.1 && b.kv_full_share >= 0.25)) {
    b.kind = "KV capacity";
    b.detail = fmt::format("{} preemptions for {} requests; requests wait at {:.0f}% of the "
                           "steps, {:.0f}% of those with the KV cache at least 95% full (mean use "
                           "{:.0f}%)",
                           b.num_preemptions, num_requests, 100 * b.queued_share,
                           100 * b.kv_full_share, 100 * b.kv_mean_utilization);
  } else if (b.queued_share >= 0.1 && b.seq_limited_share >= 0.25) {
    b.kind = "max_num_seqs";
    b.detail = fmt::format("requests wait at {:.0f}% of the steps, {:.0f}% of those with {} "
                           "sequences running (max_num_seqs)",
                           100 * b.queued_share, 100 * b.seq_limited_share, max_num_seqs);
  } else if (b.queued_share >= 0.1 && b.token_limited_share >= 0.5) {
    b.kind = "max_num_batched_tokens";
    b.detail = fmt::format("requests wait at {:.0f}% of the steps, {:.0f}% of those with the "
                           "token budget of {} full (max_num_batched_tokens)",
                           100 * b.queued_share, 100 * b.token_limited_share, max_tokens);
  } else {
    const std::array<std::pair<const char*, double>, 4> parts = {{
        {"compute", s.compute_s},
        {"HBM bandwidth", s.memory_s},
        {"communication", s.communication_s},
        {"step overhead", s.overhead_s},
    }};
    const auto top = std::max_element(parts.begin(), parts.end(),
                                      [](const auto& x, const auto& y) { return x.second < y.second; });
    b.kind = top->first;
    b.detail = fmt::format("the largest part of the step time ({:.0f}%); KV use {:.0f}% on "
                           "average, {} preemptions",
                           100 * top->second / busy, 100 * b.kv_mean_utilization,
                           b.num_preemptions);
  }
  b.detail += "; " + split;
}

}  // namespace

WhyReplay replay_why(ServeAnswer& a, const serving::SloSpec& slo) {
  a.config.setup.timeseries_interval = Duration::zero();  // every step sampled
  const std::int64_t max_num_seqs = a.budget.engine.max_num_seqs;
  const std::int64_t max_tokens = a.budget.engine.max_num_batched_tokens;
  SplitListener steps;
  LimitObserver limits(slo, max_num_seqs, max_tokens, a.budget.result.num_gpu_blocks);
  simulate_serve(a, &limits, &steps);
  WhyReplay w;
  Bottleneck& b = w.why;
  b.split = steps.split;
  b.queued_share = share(limits.queued, limits.num_samples);
  b.seq_limited_share = share(limits.seq_limited, limits.queued);
  b.token_limited_share = share(limits.token_limited, limits.queued);
  b.kv_full_share = share(limits.kv_full, limits.queued);
  b.num_preemptions = a.result.num_preemptions;
  b.kv_mean_utilization = a.result.kv_mean_utilization();
  classify(b, a.result.metrics.num_arrived, max_num_seqs, max_tokens);
  const double d = a.result.duration_s();
  w.slo_output_tokens_per_s = d > 0.0 ? static_cast<double>(limits.good_output_tokens) / d : 0.0;
  return w;
}

std::string missed_slo_text(Duration ttft_p99, Duration tpot_p99, Duration e2e_p99,
                            const serving::SloSpec& slo) {
  std::string s;
  const auto add = [&s](const char* name, Duration got, const std::optional<Duration>& target) {
    if (!target || got <= *target) return;
    s += fmt::format("{}{} p99 {:.4g} s > {:.4g} s", s.empty() ? "" : ", ", name, got.seconds(),
                     target->seconds());
  };
  add("TTFT", ttft_p99, slo.ttft);
  add("TPOT", tpot_p99, slo.tpot);
  add("E2E", e2e_p99, slo.e2e);
  return s;
}

}  // namespace vramsim::run::detail
