// `vramsim bench serve` (bench_serve.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "sim/cli/commands.hpp"

namespace vramsim::cli {

struct ServeBenchOptions {
  std::int64_t num_requests = 1'000'000;
  int replicas = 4;
  /// Arrival rate of the synthetic run: about half of the ~84 requests/s at which 4 H100
  /// replicas of Llama-3.1-8B saturate on the Azure conversation lengths under the roofline
  /// model (found with this benchmark's --rate: above it the queue grows without bound).
  double rate_per_s = 40.0;
  std::uint64_t seed = 1;
  std::string traces_dir;  // replay every trace here too; empty: skip
  OutputFormat format = OutputFormat::kTable;
};

int run_serve_bench(const ServeBenchOptions& options);

}  // namespace vramsim::cli
