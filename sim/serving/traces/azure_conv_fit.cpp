#include "sim/serving/traces/azure_conv_fit.hpp"

namespace vramsim::serving {

TraceSpec azure_conv_synthetic(std::int64_t num_requests, std::uint64_t seed) {
  TraceSpec spec;
  spec.kind = TraceKind::kSynthetic;
  SyntheticSpec& s = spec.synthetic;
  s.arrivals = {ArrivalProcess::kGamma, kAzureConvRatePerS, kAzureConvInterArrivalCv};
  s.prompt = LognormalLength{kAzureConvPromptMu, kAzureConvPromptSigma, kAzureConvPromptMin,
                             kAzureConvPromptMax};
  s.output = LognormalLength{kAzureConvOutputMu, kAzureConvOutputSigma, kAzureConvOutputMin,
                             kAzureConvOutputMax};
  s.num_requests = num_requests;
  s.seed = seed;
  return spec;
}

}  // namespace vramsim::serving
