#include "sim/model/parallelism.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/core/check.hpp"

namespace vramsim::model {

namespace {

// The TP sizes in [1, 64] that split `spec` (for the hint in messages).
std::string valid_tp_sizes(const ModelSpec& spec) {
  std::string out;
  for (int tp = 1; tp <= 64; ++tp) {
    if (!validate_parallelism(spec, Parallelism{tp, 1}).ok()) continue;
    if (!out.empty()) out += ", ";
    out += std::to_string(tp);
  }
  return out.empty() ? std::string("none") : out;
}

void check_divides(ValidationReport& r, int tp, std::int64_t size, std::string_view what) {
  if (size > 0 && size % tp != 0) {
    r.error("tp", fmt::format("tensor-parallel size {} does not divide {} = {} (vLLM splits it "
                              "evenly across ranks)",
                              tp, what, size));
  }
}

ValidationReport validate_tp(const ModelSpec& spec, int tp) {
  ValidationReport r;
  check_divides(r, tp, spec.num_attention_heads, "num_attention_heads");
  if (!spec.mla) {
    const std::int64_t kv = spec.num_kv_heads;
    if (tp <= kv) {
      check_divides(r, tp, kv, "num_key_value_heads");
    } else if (tp % kv != 0) {
      r.error("tp", fmt::format("tensor-parallel size {} exceeds num_key_value_heads = {} and is "
                                "not a multiple of it (vLLM replicates each KV head over tp / "
                                "num_key_value_heads ranks)",
                                tp, kv));
    }
  }
  if (spec.layers.end() != std::find_if(spec.layers.begin(), spec.layers.end(),
                                        [](const LayerSpec& l) { return !l.moe; })) {
    check_divides(r, tp, spec.intermediate_size, "intermediate_size");
  }
  if (spec.moe) {
    check_divides(r, tp, spec.moe->expert_intermediate_size, "the expert intermediate size");
    check_divides(r, tp, spec.moe->shared_intermediate_size, "the shared expert intermediate size");
  }
  return r;
}

}  // namespace

ValidationReport validate_parallelism(const ModelSpec& spec, Parallelism par) {
  ValidationReport r;
  if (par.tp < 1) r.error("tp", fmt::format("must be at least 1, got {}", par.tp));
  if (par.pp < 1) r.error("pp", fmt::format("must be at least 1, got {}", par.pp));
  if (par.pp > spec.num_layers) {
    r.error("pp", fmt::format("pipeline-parallel size {} exceeds num_hidden_layers = {} (every "
                              "stage needs at least one layer)",
                              par.pp, spec.num_layers));
  }
  if (par.tp >= 1) r.merge(validate_tp(spec, par.tp));
  return r;
}

void check_parallelism(const ModelSpec& spec, Parallelism par) {
  ValidationReport r = validate_parallelism(spec, par);
  if (r.ok()) return;
  ValidationReport out;
  for (const Problem& p : r.problems()) {
    std::string message = p.message;
    if (p.field == "tp") message += fmt::format("; valid tp for {}: {}", spec.name,
                                                valid_tp_sizes(spec));
    out.error(p.field, std::move(message), p.where);
  }
  throw ConfigError(out);
}

LayerRange stage_layers(std::int64_t num_layers, int pp, int rank) {
  VRAMSIM_CHECK(pp >= 1 && pp <= num_layers && rank >= 0 && rank < pp,
                "stage_layers({}, {}, {}): needs 1 <= pp <= layers and 0 <= rank < pp",
                num_layers, pp, rank);
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(pp), num_layers / pp);
  const std::int64_t remainder = num_layers % pp;
  for (std::int64_t i = 2; i < remainder + 2; ++i) {
    sizes[static_cast<std::size_t>(pp - i)] += 1;
  }
  LayerRange r;
  for (int i = 0; i < rank; ++i) r.begin += sizes[static_cast<std::size_t>(i)];
  r.end = r.begin + sizes[static_cast<std::size_t>(rank)];
  return r;
}

std::int64_t kv_heads_per_device(const ModelSpec& spec, int tp) {
  VRAMSIM_CHECK(tp >= 1, "tp must be >= 1, got {}", tp);
  return std::max<std::int64_t>(1, spec.num_kv_heads / tp);
}

}  // namespace vramsim::model
