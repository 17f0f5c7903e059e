#include "sim/serving/mixed_batch_attention.hpp"

#include "sim/core/check.hpp"
#include "sim/model/parallelism.hpp"

namespace vramsim::serving {

namespace {

// FA2's query tile for the head sizes of these models (kBlockM = 128 in its forward kernels).
constexpr std::int64_t kQueryTile = 128;

bool runs_flash_attention_2(const hardware::DeviceSpec& device) {
  const int cc = device.compute_capability;
  return device.vendor == hardware::Vendor::kNvidia &&
         ((cc >= 80 && cc < 90) || (cc >= 120 && cc < 130));
}

}  // namespace

std::optional<MixedBatchDecode> MixedBatchDecode::for_device(const model::ModelSpec& spec,
                                                             const hardware::DeviceSpec& device,
                                                             model::Parallelism par,
                                                             const RooflineOptions& options) {
  if (!options.fa2_mixed_batches || spec.mla || !runs_flash_attention_2(device)) {
    return std::nullopt;
  }
  VRAMSIM_CHECK(device.num_sms > 0, "device '{}' has no SM count", device.id);
  const std::int64_t q_heads = spec.num_attention_heads / par.tp;
  const std::int64_t kv_heads = model::kv_heads_per_device(spec, par.tp);
  VRAMSIM_CHECK(q_heads >= 1 && kv_heads >= 1, "{} query and {} KV heads per device", q_heads,
                kv_heads);
  MixedBatchDecode m;
  const double group = static_cast<double>(q_heads) / static_cast<double>(kv_heads);
  m.kv_factor_ = 1.0 + (group > 1.0 ? group - 1.0 : 0.0) * options.fa2_mixed_repeat_miss;
  m.heads_per_sm_ = static_cast<double>(q_heads) / static_cast<double>(device.num_sms);
  m.empty_tile_s_ = options.fa2_mixed_empty_tile.seconds();
  m.decode_tile_s_ = options.fa2_mixed_decode_tile.seconds();
  return m;
}

double MixedBatchDecode::block_seconds(std::int64_t num_decodes, std::int64_t max_query) const {
  VRAMSIM_CHECK(num_decodes >= 0 && max_query > 1, "{} decodes beside a query of {}",
                num_decodes, max_query);
  const auto tiles = static_cast<double>((max_query + kQueryTile - 1) / kQueryTile);
  return static_cast<double>(num_decodes) * heads_per_sm_ *
         (tiles * empty_tile_s_ + decode_tile_s_);
}

}  // namespace vramsim::serving
