// Thin RAII wrappers over the CUDA runtime for the calibration benches: device and pinned
// buffers, a stream, and the CUDA-event Timer of the harness. Host code (C++ compiled by the
// host compiler against the CUDA runtime headers).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/cuda_check.hpp"
#include "kernels/harness.hpp"

namespace vramsim::kernels {

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    CUDA_CHECK(cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes));
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
    CUDA_CHECK(cudaMallocHost(&ptr_, bytes == 0 ? 1 : bytes));
  }
  ~PinnedBuffer() { cudaFreeHost(ptr_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

/// Times the work issued on `stream` between start() and stop_s() with two CUDA events.
class EventTimer final : public Timer {
 public:
  explicit EventTimer(cudaStream_t stream);
  ~EventTimer() override;
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start() override;
  double stop_s() override;

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace vramsim::kernels
