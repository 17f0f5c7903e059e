// The price table of `vramsim compare serve`: topologies/prices.toml, US dollars per GPU per hour
// for the device ids of topologies/devices/, each with where its figure comes from. The file is
// user-editable; `--gpu-price-per-hour` overrides it for one run.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace vramsim::run {

struct GpuPrice {
  double usd_per_gpu_hour = 0.0;  // > 0
  std::string source;             // "within the ... range of [M]", "example figure", "--gpu-price-per-hour"
};

/// Every row of `file` (a prices.toml), keyed by device id. `devices_dir`, when not empty, is
/// the folder of device files: a table whose id has no `<id>.toml` there is refused. Throws
/// ConfigError naming file:line and the field ("h100-sxm.usd_per_gpu_hour") for a missing or
/// non-positive price, a missing source, a key that is not a table, or an unknown key; a file
/// that cannot be read or parsed is a ConfigError naming the file.
std::map<std::string, GpuPrice> load_gpu_prices(const std::filesystem::path& file,
                                                const std::filesystem::path& devices_dir = {});

/// The price of `gpu_id` (case ignored) from `topologies_root`/prices.toml. nullopt when the
/// file does not exist or has no row for the GPU; a file that exists and is bad throws as
/// load_gpu_prices does.
std::optional<GpuPrice> price_per_gpu_hour(const std::filesystem::path& topologies_root,
                                           const std::string& gpu_id);

}  // namespace vramsim::run
