// LMCache's settings for `--kv-offloading-backend lmcache` (vLLM's LMCacheConnectorV1), read from
// the YAML file LMCache takes as LMCACHE_CONFIG_FILE (`--lmcache-config FILE`). Keys and
// defaults are LMCache's (lmcache/v1/config.py, _CONFIG_DEFINITIONS, read at commit 000620e3):
//
//   key                  default  read as
//   chunk_size           256      tokens per chunk: the unit LMCache stores, looks up and evicts
//   local_cpu            true     the CPU tier; false (no CPU tier) is refused: not modelled
//   max_local_cpu_size   5.0      GiB of pinned host memory per worker (TP x PP rank): LMCache
//                                 allocates int(size * 1024**3) bytes (LocalCPUBackend.
//                                 initialize_allocator). vLLM's --kv-offloading-size replaces it
//                                 with size / (TP x PP) (vllm/config/vllm.py,
//                                 _post_init_kv_transfer_config: lmcache.max_local_cpu_size)
//   local_disk           null     a disk tier ("file:///path/"); null: none
//   max_local_disk_size  0.0      GiB of disk per worker
//   save_unfull_chunk    false    true (a prompt's last partial chunk stored) is refused
//   use_layerwise, save_decode_cache, enable_async_loading, enable_blending, enable_p2p,
//   enable_pd            false    true is refused: not modelled
//   cache_policy         LRU      another policy is refused: not modelled
//   remote_url           null     a remote backend is refused: not modelled
//
// Any other key is refused by name, so nothing is silently ignored.
//
// The file must be flat YAML: one `key: value` per line, `#` comments, blank lines, a UTF-8 BOM
// and CRLF line ends are accepted; values may be quoted. Anything else YAML allows (nesting,
// lists, flow collections, anchors, block scalars, several documents) is refused with the file
// and line, as the project has no YAML reader.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace vramsim::run {

/// LMCache's max_local_cpu_size default, GiB per worker (lmcache/v1/config.py).
inline constexpr double kLmcacheDefaultCpuGib = 5.0;
/// LMCache's chunk_size default, tokens (lmcache/v1/config.py).
inline constexpr std::int64_t kLmcacheDefaultChunkSize = 256;

struct LmcacheSettings {
  std::int64_t chunk_size = kLmcacheDefaultChunkSize;
  /// GiB per worker; nullopt: not given (LMCache's default, or vLLM's --kv-offloading-size).
  std::optional<double> max_local_cpu_size;
  /// local_disk as given; nullopt: no disk tier.
  std::optional<std::string> local_disk;
  double max_local_disk_size = 0.0;  // GiB per worker
  std::string file;                  // where the settings came from; "" for the defaults
};

/// Reads `file`, or returns the defaults for an empty path. Throws ConfigError, field
/// "engine.lmcache_config", listing every problem with its file and line.
LmcacheSettings read_lmcache_config(const std::filesystem::path& file);

/// The same on text already read; `file` names it in errors.
LmcacheSettings parse_lmcache_config(std::string_view text, const std::string& file);

/// LMCache's GiB (int(size * 1024**3), as LMCache allocates them) as bytes.
Bytes lmcache_gib(double gib);

}  // namespace vramsim::run
