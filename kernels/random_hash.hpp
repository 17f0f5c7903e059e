// The counter-based hash behind the calibration's random data, usable on the host and the
// device, so a CPU reference regenerates exactly the inputs a kernel read.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define VRAMSIM_HOST_DEVICE __host__ __device__
#else
#define VRAMSIM_HOST_DEVICE
#endif

namespace vramsim::kernels {

/// Uniform in [-scale, scale) from (seed, index): splitmix64's finalizer (Steele, Lea, Flood,
/// "Fast splittable pseudorandom number generators", OOPSLA 2014), top 24 bits.
VRAMSIM_HOST_DEVICE inline float hash_uniform(std::uint64_t seed, std::uint64_t index,
                                              float scale) {
  std::uint64_t z = seed + (index + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const float unit = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1)
  return (2.0f * unit - 1.0f) * scale;
}

}  // namespace vramsim::kernels
