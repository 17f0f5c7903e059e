#include "sim/run/gpu_prices.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "sim/core/error.hpp"
#include "sim/io/toml_reader.hpp"

namespace vramsim::run {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::map<std::string, GpuPrice> load_gpu_prices(const std::filesystem::path& file,
                                                const std::filesystem::path& devices_dir) {
  io::TomlReader r = io::TomlReader::from_file(file);
  std::map<std::string, GpuPrice> prices;
  for (const std::string& id : r.table_keys("")) {
    if (!r.required_table(id)) continue;
    if (!devices_dir.empty() && !std::filesystem::exists(devices_dir / (id + ".toml"))) {
      r.error(id, "no device '" + id + "' in " + devices_dir.string() +
                      ": each table is a device id of topologies/devices/");
      r.mark_read(id);
      continue;
    }
    const std::string price_path = io::join_path(id, "usd_per_gpu_hour");
    const std::optional<double> usd = r.required_double(price_path);
    const std::optional<std::string> source = r.required_string(io::join_path(id, "source"));
    if (usd && !(*usd > 0.0 && std::isfinite(*usd))) {
      r.error(price_path, "must be > 0 and finite (US dollars per GPU per hour)");
      continue;
    }
    if (source && source->empty()) {
      r.error(io::join_path(id, "source"), "must say where the figure comes from");
      continue;
    }
    if (usd && source) prices[id] = {*usd, *source};
  }
  r.finish();
  return prices;
}

std::optional<GpuPrice> price_per_gpu_hour(const std::filesystem::path& topologies_root,
                                           const std::string& gpu_id) {
  const std::filesystem::path file = topologies_root / "prices.toml";
  if (!std::filesystem::exists(file)) return std::nullopt;
  const auto prices = load_gpu_prices(file, topologies_root / "devices");
  const auto it = prices.find(lower(gpu_id));
  if (it == prices.end()) return std::nullopt;
  return it->second;
}

}  // namespace vramsim::run
