// The token lengths of a fine-tuning dataset's samples (--sample-lengths), and what they make of
// the sequences of a step under each way of batching them (--packing):
//
//   padded     each micro-batch of b samples padded to its longest (Hugging Face's
//              DataCollatorWithPadding, padding="longest"), every sample truncated to seq_len
//              (max_length): the step's shapes are b x L with L the longest of b draws; pad
//              tokens are computed and wasted
//   concat     samples concatenated into full sequences of seq_len tokens, attention across
//              sample boundaries (Megatron-LM's default, TRL's ConstantLengthDataset)
//   documents  concatenated likewise, attention only within each sample (TRL's padding-free
//              packing with position_ids and varlen flash attention, torchtune's packed
//              datasets with a document mask)
//
// Expectations are exact over the empirical distribution (each sample equally likely, drawn
// independently): E[max of n draws] = sum_k v_k (F(v_k)^n - F(v_k-1)^n) over the distinct
// lengths v_k, F the empirical CDF. No sampling, so no seed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "sim/core/enum_table.hpp"

namespace vramsim::training {

enum class Packing {
  kPadded,
  kConcat,
  kDocuments,
};

inline constexpr auto kPackings = enum_table<Packing>({
    {Packing::kPadded, "padded", "each micro-batch padded to its longest sample"},
    {Packing::kConcat, "concat", "samples concatenated to seq_len, attention across them"},
    {Packing::kDocuments, "documents",
     "samples concatenated to seq_len, attention within each (varlen / document mask)"},
});
static_assert(covers_every_enumerator(kPackings) && names_are_unique(kPackings));

std::string_view to_string(Packing p);
std::optional<Packing> packing_from_string(std::string_view s);
std::string_view packing_names();

/// Query-key pairs a causal sequence of s tokens attends, through a window w (0 = global).
double attended_pairs(std::int64_t s, std::int64_t window);

class SampleLengths {
 public:
  /// From token counts in any order: at least one, each >= 1 (checked).
  explicit SampleLengths(std::span<const std::int64_t> lengths);

  std::int64_t num_samples() const { return total_; }
  /// The longest sample truncated to max_len: min(max l, max_len).
  std::int64_t longest(std::int64_t max_len) const;
  /// E[min(l, max_len)].
  double mean(std::int64_t max_len) const;
  /// E[max of n independent draws of min(l, max_len)], n >= 1.
  double expected_longest(std::int64_t n, std::int64_t max_len) const;
  /// E[attended_pairs(min(l, max_len), window)]: causal attention within one sample.
  double mean_pairs(std::int64_t max_len, std::int64_t window) const;
  /// E[l' min(l', window)] with l' = min(l, max_len) (window 0: l'^2): the attended tokens of a
  /// sample in the PaLM convention model FLOPs count (every token attending the whole sample).
  double mean_attended_tokens(std::int64_t max_len, std::int64_t window) const;

 private:
  template <class F>
  double expectation(std::int64_t max_len, F f) const;

  std::vector<std::int64_t> values_;  // distinct lengths, ascending
  std::vector<std::int64_t> counts_;  // samples of each
  std::int64_t total_ = 0;
};

}  // namespace vramsim::training
