#include "sim/io/topology_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <system_error>

#include "sim/io/toml_reader.hpp"

namespace vramsim::io {

namespace {

namespace fs = std::filesystem;
using hardware::DeviceSpec;
using hardware::NodeSpec;

constexpr double kBytesPerGiBOverGB = 1073741824.0 / 1e9;

std::string to_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_kebab_id(std::string_view s) {
  if (s.empty() || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

/// Reads "id" and checks it is lower-case kebab and equals the file name (so lookups by file
/// name and the id inside never disagree).
std::string read_id(TomlReader& r, const fs::path& file) {
  std::optional<std::string> id = r.required_string("id");
  if (!id) return {};
  const std::string stem = file.stem().string();
  if (!is_kebab_id(*id)) {
    r.error("id", fmt::format("\"{}\" is not a lower-case kebab id such as \"h100-sxm\"", *id));
  } else if (*id != stem) {
    r.error("id", fmt::format("\"{}\" differs from the file name \"{}\"; they must match", *id,
                              file.filename().string()));
  }
  return *id;
}

template <typename Quantity>
Quantity positive(TomlReader& r, std::string_view path, std::optional<Quantity> value,
                  double magnitude) {
  if (value && !(magnitude > 0)) r.error(path, "must be positive");
  return value.value_or(Quantity{});
}

Bytes positive_bytes(TomlReader& r, std::string_view path, std::optional<Bytes> v) {
  return positive(r, path, v, v ? static_cast<double>(v->count()) : 0.0);
}
Bandwidth positive_bandwidth(TomlReader& r, std::string_view path, std::optional<Bandwidth> v) {
  return positive(r, path, v, v ? v->bytes_per_second() : 0.0);
}
std::optional<FlopRate> positive_rate(TomlReader& r, std::string_view path,
                                      std::optional<FlopRate> v) {
  if (v && !(v->per_second() > 0)) r.error(path, "must be positive");
  return v;
}

int int_in_range(TomlReader& r, std::string_view path, std::optional<std::int64_t> v, int lo,
                 int hi) {
  if (!v) return 0;
  if (*v < lo || *v > hi) {
    r.error(path, fmt::format("must be between {} and {}, got {}", lo, hi, *v));
    return 0;
  }
  return static_cast<int>(*v);
}

std::vector<std::string> sources(TomlReader& r) {
  std::optional<std::vector<std::string>> s = r.required_string_array("sources");
  if (s && s->empty()) r.error("sources", "must name at least one source for the figures");
  return s.value_or(std::vector<std::string>{});
}

void read_memory(TomlReader& r, DeviceSpec& d) {
  if (!r.required_table("memory")) return;
  d.memory_total = positive_bytes(r, "memory.total", r.required_bytes("memory.total"));
  d.memory_marketed = positive_bytes(r, "memory.marketed", r.required_bytes("memory.marketed"));
  d.memory_kind = r.required_string("memory.kind").value_or("");
  d.memory_bandwidth =
      positive_bandwidth(r, "memory.bandwidth", r.required_bandwidth("memory.bandwidth"));
  if (std::optional<std::string> basis = r.required_string("memory.total_basis")) {
    if (*basis == "measured" || *basis == "estimated") {
      d.memory_total_measured = *basis == "measured";
    } else {
      r.error("memory.total_basis",
              fmt::format("\"{}\" is not one of: measured, estimated", *basis));
    }
  }
  // NOTE: memory datasheets say "GB" for what is binary on the chips (80 GB HBM3 is 80 GiB), so
  // the runtime total may exceed the decimal figure but never the figure read as GiB.
  const double ceiling = static_cast<double>(d.memory_marketed.count()) * kBytesPerGiBOverGB;
  if (d.memory_marketed > Bytes(0) && static_cast<double>(d.memory_total.count()) > ceiling) {
    r.error("memory.total",
            fmt::format("{} exceeds the marketed size read as binary units ({:.2f} GiB); check "
                        "GB vs GiB",
                        format_bytes(d.memory_total), d.memory_marketed.gb()));
  }
}

void read_compute(TomlReader& r, DeviceSpec& d) {
  if (!r.required_table("compute")) return;
  hardware::PeakRates& p = d.peak;
  p.fp32 = positive_rate(r, "compute.fp32", r.required_flop_rate("compute.fp32"))
               .value_or(FlopRate{});
  p.fp16 = positive_rate(r, "compute.fp16", r.required_flop_rate("compute.fp16"))
               .value_or(FlopRate{});
  p.tf32 = positive_rate(r, "compute.tf32", r.optional_flop_rate("compute.tf32"));
  p.bf16 = positive_rate(r, "compute.bf16", r.optional_flop_rate("compute.bf16"));
  p.fp8 = positive_rate(r, "compute.fp8", r.optional_flop_rate("compute.fp8"));
  p.int8 = positive_rate(r, "compute.int8", r.optional_flop_rate("compute.int8"));
  d.num_sms = int_in_range(r, "compute.num_sms", r.required_int64("compute.num_sms"), 1, 4096);
  if (std::optional<std::string> cc = r.required_string("compute.compute_capability")) {
    // "major.minor", each a small integer: "8.9", "10.0", "12.0".
    const std::size_t dot = cc->find('.');
    const auto digits = [](std::string_view s) {
      return !s.empty() && s.size() <= 2 &&
             std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (dot == std::string::npos || !digits(std::string_view(*cc).substr(0, dot)) ||
        !digits(std::string_view(*cc).substr(dot + 1)) || cc->size() - dot - 1 != 1) {
      r.error("compute.compute_capability",
              fmt::format("expected major.minor as torch.cuda.get_device_capability() gives it "
                          "(\"8.9\", \"10.0\"; ROCm: \"9.4\" for gfx942), got \"{}\"",
                          *cc));
    } else {
      d.compute_capability = std::stoi(cc->substr(0, dot)) * 10 + std::stoi(cc->substr(dot + 1));
    }
  }
}

// [fitted]: constants fitted to a public profile of this device, each with its source.
void read_fitted(TomlReader& r, DeviceSpec& d) {
  if (!r.optional_table("fitted")) return;
  const std::optional<double> e = r.required_double("fitted.matmul_efficiency");
  if (e && !(*e > 0.0 && *e <= 1.0)) {
    r.error("fitted.matmul_efficiency", fmt::format("must be in (0, 1], got {}", *e));
  } else if (e) {
    d.fitted_matmul_efficiency = *e;
  }
  d.fitted_matmul_source = r.required_string("fitted.matmul_source").value_or("");
  if (e && d.fitted_matmul_source.empty()) {
    r.error("fitted.matmul_source", "must name the profile the efficiency was fitted to");
  }
}

void read_links(TomlReader& r, DeviceSpec& d) {
  if (r.optional_table("peer_link")) {
    hardware::PeerLink link;
    if (std::optional<std::string> kind = r.required_string("peer_link.kind")) {
      if (auto k = hardware::peer_link_kind_from_string(*kind)) {
        link.kind = *k;
      } else {
        r.error("peer_link.kind",
                fmt::format("\"{}\" is not one of: {}", *kind,
                            names_list<hardware::kPeerLinkKinds>()));
      }
    }
    link.generation =
        int_in_range(r, "peer_link.generation", r.required_int64("peer_link.generation"), 1, 10);
    link.bandwidth_per_direction =
        positive_bandwidth(r, "peer_link.bandwidth_per_direction",
                           r.required_bandwidth("peer_link.bandwidth_per_direction"));
    link.bridge_only = r.optional_bool("peer_link.bridge_only").value_or(false);
    d.peer_link = link;
  }
  if (r.required_table("pcie")) {
    d.pcie.generation =
        int_in_range(r, "pcie.generation", r.required_int64("pcie.generation"), 1, 7);
    d.pcie.bandwidth_per_direction =
        positive_bandwidth(r, "pcie.bandwidth_per_direction",
                           r.required_bandwidth("pcie.bandwidth_per_direction"));
  }
}

std::vector<std::string> ids_in(const fs::path& dir) {
  std::vector<std::string> ids;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return ids;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".toml") {
      ids.push_back(e.path().stem().string());
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string joined(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) {
    if (!out.empty()) out += ", ";
    out += id;
  }
  return out.empty() ? std::string("(none)") : out;
}

/// The file of `id` in `dir`, or throws ConfigError under `field` listing the valid ids.
fs::path lookup(std::string_view id, const fs::path& dir, std::string_view what,
                std::string_view field) {
  const std::vector<std::string> ids = ids_in(dir);
  const std::string wanted = to_lower(id);
  if (std::find(ids.begin(), ids.end(), wanted) == ids.end()) {
    throw ConfigError(std::string(field),
                      fmt::format("unknown {} id '{}'; valid ids ({}): {}", what, id,
                                  dir.string(), joined(ids)));
  }
  return dir / (wanted + ".toml");
}

}  // namespace

fs::path default_topologies_dir() { return fs::path(VRAMSIM_SOURCE_ROOT) / "topologies"; }

DeviceSpec load_device_file(const fs::path& file) {
  TomlReader r = TomlReader::from_file(file);
  DeviceSpec d;
  d.source_file = file.string();
  d.id = read_id(r, file);
  d.name = r.required_string("name").value_or("");
  if (std::optional<std::string> vendor = r.required_string("vendor")) {
    if (auto v = hardware::vendor_from_string(*vendor)) {
      d.vendor = *v;
    } else {
      r.error("vendor", fmt::format("\"{}\" is not one of: {}", *vendor,
                                    names_list<hardware::kVendors>()));
    }
  }
  d.architecture = r.required_string("architecture").value_or("");
  read_memory(r, d);
  read_compute(r, d);
  read_fitted(r, d);
  read_links(r, d);
  d.sources = sources(r);
  for (const hardware::SheetProblem& p : hardware::implausible_figures(d)) {
    r.error(p.field, p.message);
  }
  r.finish();
  return d;
}

void check_link_figures(TomlReader& r, std::string_view bandwidth_path,
                        std::optional<Bandwidth> bandwidth, std::string_view latency_path,
                        std::optional<Duration> latency) {
  if (bandwidth && bandwidth->bytes_per_second() > 0) {
    const double bps = bandwidth->bytes_per_second();
    if (!(bps >= hardware::kMinLinkBandwidth && bps <= hardware::kMaxLinkBandwidth)) {
      r.error(bandwidth_path,
              fmt::format("{:g} B/s is outside the accepted range [{:g}, {:g}] B/s", bps,
                          hardware::kMinLinkBandwidth, hardware::kMaxLinkBandwidth));
    }
  }
  if (latency && *latency > kMaxLinkLatency) {
    r.error(latency_path, fmt::format("{:g} s is above the accepted {:g} s", latency->seconds(),
                                      kMaxLinkLatency.seconds()));
  }
}

NodeSpec load_node_file(const fs::path& file) {
  TomlReader r = TomlReader::from_file(file);
  NodeSpec n;
  n.source_file = file.string();
  n.id = read_id(r, file);
  n.description = r.required_string("description").value_or("");
  n.num_gpus = int_in_range(r, "num_gpus", r.required_int64("num_gpus"), 1, 64);
  if (std::optional<std::string> device = r.optional_string("device")) {
    // The node's devices/ sibling folder (a copy of topologies/) or the built-in sheets must
    // hold that device, so that a node file anywhere can name h100-sxm. Listed: the sibling ids,
    // then the built-in ones not among them.
    std::vector<std::string> ids = ids_in(file.parent_path().parent_path() / "devices");
    for (const std::string& id : ids_in(default_topologies_dir() / "devices")) {
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    if (std::find(ids.begin(), ids.end(), *device) == ids.end()) {
      r.error("device", fmt::format("unknown device id '{}'; valid ids: {}", *device, joined(ids)));
    }
    n.device_id = *device;
  }
  if (std::optional<Bytes> host = r.optional_bytes("host_memory")) {
    // NOTE: a bound, not a range check for its own sake: plan serve and budget hold the KV
    // offload tiers against this figure, and a unit slip ("2PB") would pass every tier.
    const Bytes most = TiB(hardware::kMaxNodeHostMemoryTiB);
    if (*host <= Bytes(0)) {
      r.error("host_memory", fmt::format("must be positive, got {}", format_bytes(*host)));
    } else if (*host > most) {
      r.error("host_memory",
              fmt::format("{} is above the accepted {} (a server's DIMMs); check the unit",
                          format_bytes(*host), format_bytes(most)));
    } else {
      n.host_memory = *host;
    }
  }
  if (r.required_table("fabric")) {
    if (std::optional<std::string> kind = r.required_string("fabric.kind")) {
      if (auto k = hardware::fabric_kind_from_string(*kind)) {
        n.fabric.kind = *k;
      } else {
        r.error("fabric.kind", fmt::format("\"{}\" is not one of: {}", *kind,
                                           names_list<hardware::kFabricKinds>()));
      }
    }
    if (std::optional<Bandwidth> bw = r.optional_bandwidth("fabric.bandwidth_per_direction")) {
      n.fabric.bandwidth_per_direction =
          positive_bandwidth(r, "fabric.bandwidth_per_direction", bw);
    }
    const bool single = n.fabric.kind == hardware::FabricKind::kNone;
    std::optional<Duration> latency = single ? r.optional_duration("fabric.latency")
                                             : r.required_duration("fabric.latency");
    n.fabric.latency = latency.value_or(Duration::zero());
    check_link_figures(r, "fabric.bandwidth_per_direction", n.fabric.bandwidth_per_direction,
                       "fabric.latency", latency);
    if (single && n.num_gpus > 1) {
      r.error("fabric.kind",
              fmt::format("\"none\" only fits a single GPU; this node has {}", n.num_gpus));
    } else if (!single && n.num_gpus == 1) {
      r.error("fabric.kind", "a single-GPU node has no fabric; write kind = \"none\"");
    }
  }
  n.sources = sources(r);
  r.finish();
  return n;
}

std::vector<std::string> device_ids(const fs::path& topologies_dir) {
  return ids_in(topologies_dir / "devices");
}

std::vector<std::string> node_ids(const fs::path& topologies_dir) {
  return ids_in(topologies_dir / "nodes");
}

DeviceSpec find_device(std::string_view id, const fs::path& topologies_dir,
                       std::string_view field) {
  return load_device_file(lookup(id, topologies_dir / "devices", "device", field));
}

NodeSpec find_node(std::string_view id, const fs::path& topologies_dir, std::string_view field) {
  NodeSpec node = load_node_file(lookup(id, topologies_dir / "nodes", "node", field));
  if (node.device_id) {
    const DeviceSpec device = find_device(*node.device_id, topologies_dir, "device");
    ValidationReport report;
    hardware::validate_node_for_device(node, device, report, field);
    throw_if_errors(report);
  }
  return node;
}

NodeSpec default_node_of_device(std::string_view device_id, const fs::path& topologies_dir,
                                std::string_view field) {
  std::optional<NodeSpec> best;
  for (const std::string& id : node_ids(topologies_dir)) {
    NodeSpec n = load_node_file(topologies_dir / "nodes" / (id + ".toml"));
    if (n.device_id != device_id) continue;
    if (!best || n.num_gpus > best->num_gpus) best = std::move(n);
  }
  if (best) return *best;
  return find_node("pcie-8x", topologies_dir, field);
}

}  // namespace vramsim::io
