#include "sim/serving/expert_parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/core/check.hpp"

namespace vramsim::serving {

std::string_view to_string(All2AllBackend b) { return name_of(kAll2AllBackends, b); }

std::optional<All2AllBackend> all2all_backend_from_string(std::string_view text) {
  return parse_name(kAll2AllBackends, text);
}

std::string_view all2all_backend_names() { return names_list<kAll2AllBackends>(); }

void ExpertParallelSetup::validate(ValidationReport& report) const {
  if (data_parallel_size < 1) {
    report.error("engine.data_parallel_size",
                 fmt::format("must be at least 1, got {}", data_parallel_size));
  }
  if (!(expert_load_imbalance >= 1.0 && expert_load_imbalance <= 1e6)) {
    report.error("engine.expert_load_imbalance",
                 fmt::format("the busiest expert's tokens over the mean: must be in [1, 1e6], "
                             "got {}",
                             expert_load_imbalance));
  }
}

MoeExchange moe_exchange_time(All2AllBackend backend, const MoeExchangeShape& s, int group_size,
                              const comm::LinkModel& link) {
  VRAMSIM_CHECK(group_size >= 1, "group of {} devices", group_size);
  VRAMSIM_CHECK(s.rank_tokens >= 0 && s.group_tokens >= s.rank_tokens && s.hidden_size > 0 &&
                    s.top_k >= 0 && s.num_experts >= 0 && s.activation_bytes > 0,
                "MoE exchange of {} of {} tokens", s.rank_tokens, s.group_tokens);
  MoeExchange out;
  if (group_size == 1) return out;
  switch (backend) {
    case All2AllBackend::kAllgatherReducescatter: {
      const Bytes gathered(s.group_tokens * (s.hidden_size + s.num_experts) * s.activation_bytes);
      const Bytes combined(s.group_tokens * s.hidden_size * s.activation_bytes);
      out.dispatch =
          comm::collective_time(comm::Collective::kAllGather, gathered, group_size, link);
      out.combine =
          comm::collective_time(comm::Collective::kReduceScatter, combined, group_size, link);
      return out;
    }
    case All2AllBackend::kDeepepHighThroughput:
    case All2AllBackend::kDeepepLowLatency:
    case All2AllBackend::kPplx: {
      // NOTE: the low-latency kernels send fp8 and skip duplicate destinations; costed as the
      // plain all-to-all of top-k copies, an upper bound.
      const Bytes routed(s.rank_tokens * s.top_k * s.hidden_size * s.activation_bytes);
      out.dispatch = comm::collective_time(comm::Collective::kAllToAll, routed, group_size, link);
      out.combine = out.dispatch;
      return out;
    }
  }
  VRAMSIM_UNREACHABLE("invalid All2AllBackend");
}

double routed_assignments(std::int64_t group_tokens, std::int64_t top_k, std::int64_t num_experts,
                          std::int64_t local_experts, double load_imbalance) {
  VRAMSIM_CHECK(group_tokens >= 0 && top_k >= 1 && local_experts >= 0 &&
                    local_experts <= num_experts && load_imbalance >= 1.0,
                "{} tokens, top-{} of {} experts, {} local, imbalance {}", group_tokens, top_k,
                num_experts, local_experts, load_imbalance);
  const auto tokens = static_cast<double>(group_tokens);
  const double fair = tokens * static_cast<double>(top_k) * static_cast<double>(local_experts) /
                      static_cast<double>(num_experts);
  const double most = tokens * static_cast<double>(std::min(top_k, local_experts));
  return std::min(fair * load_imbalance, most);
}

}  // namespace vramsim::serving
