#include "kernels/cuda_timer.hpp"

namespace vramsim::kernels {

EventTimer::EventTimer(cudaStream_t stream) : stream_(stream) {
  CUDA_CHECK(cudaEventCreate(&start_));
  CUDA_CHECK(cudaEventCreate(&stop_));
}

EventTimer::~EventTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}

void EventTimer::start() { CUDA_CHECK(cudaEventRecord(start_, stream_)); }

double EventTimer::stop_s() {
  CUDA_CHECK(cudaEventRecord(stop_, stream_));
  CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return static_cast<double>(ms) * 1e-3;
}

}  // namespace vramsim::kernels
