// One accelerator as the simulator sees it: the memory the runtime reports, the memory
// bandwidth, the dense peak FLOP/s per number format, and its links (NVLink / Infinity Fabric to
// peers, PCIe to the host). Plain data, filled by io/topology_loader from
// topologies/devices/<id>.toml, plus pure functions over it.
//
// Peak rates are DENSE (no 2:4 structured sparsity) and, for GeForce parts, the rate with FP32
// accumulation, which is what cuBLAS uses for FP16/BF16 GEMMs by default.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/dtype.hpp"
#include "sim/core/enum_table.hpp"
#include "sim/core/units.hpp"

namespace vramsim::hardware {

enum class Vendor { kNvidia, kAmd };
inline constexpr auto kVendors = enum_table<Vendor>({
    {Vendor::kNvidia, "nvidia", "NVIDIA (CUDA, NCCL)"},
    {Vendor::kAmd, "amd", "AMD (ROCm, RCCL)"},
});
static_assert(covers_every_enumerator(kVendors) && names_are_unique(kVendors));

/// A direct GPU-to-GPU link family.
enum class PeerLinkKind { kNvlink, kInfinityFabric };
inline constexpr auto kPeerLinkKinds = enum_table<PeerLinkKind>({
    {PeerLinkKind::kNvlink, "nvlink", "NVIDIA NVLink"},
    {PeerLinkKind::kInfinityFabric, "infinity-fabric", "AMD Infinity Fabric (xGMI)"},
});
static_assert(covers_every_enumerator(kPeerLinkKinds) && names_are_unique(kPeerLinkKinds));

/// Direct links to other GPUs: all of one GPU's links together, per direction
/// (NVIDIA's "900 GB/s NVLink" for H100 is 450 GB/s each way).
struct PeerLink {
  PeerLinkKind kind = PeerLinkKind::kNvlink;
  int generation = 0;
  Bandwidth bandwidth_per_direction;
  /// True for PCIe cards whose NVLink exists only as a bridge between a pair of cards; such a
  /// device cannot sit on an NVSwitch fabric.
  bool bridge_only = false;
};

/// The host link: PCIe x16 of a generation, per direction (Gen5 x16: 64 GB/s each way).
struct PcieLink {
  int generation = 0;
  Bandwidth bandwidth_per_direction;
};

/// Dense peak rates. fp32 is the non-tensor (CUDA core / vector) FP32 rate and fp16 the FP16
/// tensor rate; both exist on every device. The others are absent where the part has no native
/// support (no BF16 on Turing, no FP8 before Hopper / Ada, TF32 only from Ampere on).
struct PeakRates {
  FlopRate fp32;
  FlopRate fp16;
  std::optional<FlopRate> tf32;
  std::optional<FlopRate> bf16;
  std::optional<FlopRate> fp8;
  std::optional<FlopRate> int8;
};

struct DeviceSpec {
  std::string id;            // "h100-sxm": lower-case kebab, equals the file name
  std::string name;          // "NVIDIA H100 SXM5 80GB"
  Vendor vendor = Vendor::kNvidia;
  std::string architecture;  // "hopper"
  /// What the runtime reports as the device total (cudaMemGetInfo / torch.cuda.mem_get_info),
  /// i.e. what vLLM multiplies by gpu_memory_utilization. Below the marketed size.
  Bytes memory_total;
  /// The size on the datasheet ("80GB" = 80e9 bytes); for display and sanity checks only.
  Bytes memory_marketed;
  /// True when memory_total is a recorded reading; false when estimated by a stated rule.
  bool memory_total_measured = false;
  std::string memory_kind;   // "HBM3", "GDDR6X"
  Bandwidth memory_bandwidth;
  PeakRates peak;
  /// Streaming multiprocessors (NVIDIA) or compute units (AMD): what
  /// torch.cuda.get_device_properties().multi_processor_count reports. vLLM sizes per-SM
  /// buffers by it (the Triton top-k/top-p sampler's [n_SM, vocab] fp32 buffer).
  int num_sms = 0;
  /// What torch.cuda.get_device_capability() reports, as major * 10 + minor (89 for 8.9; ROCm
  /// reports the gfx version: 94 for gfx942): what vLLM compares with a quantization method's
  /// get_min_capability() and with 80 for bfloat16.
  int compute_capability = 0;
  /// Fraction of the dense peak that GEMMs of LLM shapes reach on this device where a public
  /// per-kernel profile measured it (the sheet's [fitted] table), replacing the datasheet
  /// default (cost::kMatmulEfficiency); nullopt: none measured.
  std::optional<double> fitted_matmul_efficiency;
  std::string fitted_matmul_source;  // the profile it was fitted to
  std::optional<PeerLink> peer_link;  // nullopt: no direct GPU-to-GPU link
  PcieLink pcie;
  std::vector<std::string> sources;   // datasheets and readings the figures come from
  std::string source_file;            // the TOML file it was loaded from
};

/// The native dense peak for `dtype`, or nullopt when the device has no native support for it.
/// kInt4 is never native here: LLM int4 formats (AWQ, GPTQ) are weight-only, with 16-bit math.
std::optional<FlopRate> native_peak(const DeviceSpec& device, DType dtype);

/// Whether `dtype` runs natively (native_peak has a value).
bool supports_natively(const DeviceSpec& device, DType dtype);

/// Whether the device sits on a GPU switch fabric (a peer link that is not a two-card bridge).
bool has_switch_fabric(const DeviceSpec& device);

/// Whether NCCL builds its NVLink SHARP (NVLS) buffers on the device's fabric: NVSwitch nodes of
/// Hopper and later (NVLink 4 and third-generation NVSwitch: NVIDIA/nccl issue #1031, "NVLink
/// SHARP is an AllReduce offload system over NVLink"; NVSHMEM 3.2.5 release notes, NVLS "on
/// NVLINK4 and NVLINK5 enabled platforms"); an A100 or V100 NVLink node has none. NOTE: AMD
/// parts (compute_capability holds the gfx version) count as having them: no RCCL measurement
/// says otherwise.
bool has_nvls(const DeviceSpec& device);

/// The dtypes with native support, in DType order.
std::vector<DType> native_dtypes(const DeviceSpec& device);

/// The peak to use for math whose operands are stored as `dtype`, with this fallback rule when
/// the device lacks native support (always a positive rate):
///   fp32 -> fp32 (non-tensor; TF32 is opt-in, see peak.tf32)
///   fp16 -> fp16
///   bf16 -> bf16, else fp16  (vLLM casts bf16 models to fp16 on pre-Ampere parts)
///   fp8  -> fp8,  else the 16-bit rate above (weight-only FP8 kernels dequantize to 16 bit)
///   int8 -> int8, else fp16  (no int8 tensor math: weight-only, 16-bit math)
///   int4 -> fp16             (weight-only AWQ/GPTQ-style kernels)
FlopRate peak_flop_rate(const DeviceSpec& device, DType dtype);

/// A figure of a device sheet outside the range the simulator accepts: the sheet's field
/// ("memory.bandwidth") and why, with the accepted range.
struct SheetProblem {
  std::string field;
  std::string message;
};

/// The accepted ranges of a sheet's figures, wide enough for any real part (from a T4's
/// 65 TFLOP/s fp16 and 320 GB/s, and a B200's 8 TB/s and 2.25 PFLOP/s, to a hundred times the
/// largest), narrow enough that the times and sizes derived from them stay within the
/// simulator's int64 bytes and nanoseconds (a 1 B/s sheet makes one decode step take decades).
inline constexpr double kMinMemoryBytes = 256.0 * (1 << 20);          // 256 MiB
inline constexpr double kMaxMemoryBytes = 64.0 * 1099511627776.0;     // 64 TiB
inline constexpr double kMinMemoryBandwidth = 1e9;                     // 1 GB/s
inline constexpr double kMaxMemoryBandwidth = 1e15;                    // 1 PB/s
inline constexpr double kMinFlopRate = 1e9;                            // 1 GFLOP/s
inline constexpr double kMaxFlopRate = 1e18;                           // 1 EFLOP/s
inline constexpr double kMinLinkBandwidth = 1e8;                       // 100 MB/s
inline constexpr double kMaxLinkBandwidth = 1e15;                      // 1 PB/s

/// Every figure of `device` that is positive but outside its accepted range above (or not
/// finite). Figures that are zero, negative or NaN are left to the loader's own "must be
/// positive". Empty for every sheet in topologies/devices/.
std::vector<SheetProblem> implausible_figures(const DeviceSpec& device);

std::string_view to_string(Vendor v);
std::optional<Vendor> vendor_from_string(std::string_view s);
std::string_view to_string(PeerLinkKind k);
/// "nvlink", "infinity-fabric".
std::optional<PeerLinkKind> peer_link_kind_from_string(std::string_view s);

}  // namespace vramsim::hardware
