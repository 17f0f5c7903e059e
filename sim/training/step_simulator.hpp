// Runs a training plan's op graph on the discrete-event engine (sim/core/simulation.hpp) and
// measures memory and time per device.
//
// Each device has three in-order streams (op_graph.hpp). An event is an op's completion; after
// it, every stream whose head op has all its dependencies done starts that op. Memory goes
// through one CachingAllocator per device (sim/memory/caching_allocator.hpp, unlimited, so the
// demand is measured even when it does not fit): buffers allocated when an op starts, freed when
// it ends. The peak is the maximum over the timeline.
//
// Two steps are simulated by default: the first warms the allocator's cache, the second is the
// one timed (step time = end of the last step - end of the one before). Per device, the timed
// step splits into
//   compute        forward, recompute, backward, optimizer kernels
//   tp_comm        Megatron TP collectives (they block the compute stream)
//   cp_comm        context parallelism's exchange not hidden by attention (compute stream)
//   ep_comm        expert parallelism's token all-to-alls (compute stream)
//   exposed_comm   compute-stream idle time whose last awaited op was a data-parallel
//                  collective (FSDP gathers, gradient reductions) or the offloaded step
//   bubble         the rest of the idle time: waiting for other pipeline stages
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/memory/caching_allocator.hpp"
#include "sim/training/op_graph.hpp"
#include "sim/training/step_graph.hpp"

namespace vramsim::training {

struct SimulationOptions {
  int num_steps = 2;
  bool record_timeline = true;  // memory samples and op records (off for sweeps)
  /// Every allocator event with its address, and the allocators' final segments: what a PyTorch
  /// memory snapshot holds (sim/run/train_timeline.hpp). Off unless asked for: one record per
  /// allocation and free.
  bool record_allocations = false;
};

using CategoryBytes = std::array<Bytes, kNumMemoryCategories>;

struct DeviceResult {
  int stage = 0;
  Bytes peak_allocated;
  Bytes peak_reserved;
  CategoryBytes at_peak{};  // each category at the moment of the allocated peak
  Bytes activation_peak;    // the activations category's own maximum
  Bytes model_state;        // parameters + gradients + optimizer state (persistent)
  Bytes non_allocator;      // CUDA context and NCCL buffers, outside PyTorch's allocator
  Bytes capacity;           // the device's memory
  bool fits = false;        // peak_reserved + non_allocator <= capacity
  Bytes shortfall;          // by how much it does not fit (0 when it fits)
  std::int64_t num_segments = 0;
  std::vector<Bytes> allocated_after_step;  // allocated bytes at each step's end
  Duration step_time, compute, tp_comm, cp_comm, ep_comm, exposed_comm, bubble;
};

struct MemorySample {
  std::int64_t time_ns = 0;
  std::int32_t device = 0;
  std::array<std::int64_t, kNumMemoryCategories> bytes{};
  std::int64_t allocated = 0;
  std::int64_t reserved = 0;
};

struct OpRecord {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int32_t op = 0;  // index into the graph
};

/// One allocator event of a device, as PyTorch's memory history records it
/// (torch.cuda.memory._record_memory_history): a segment taken from or given back to the device,
/// a tensor's block allocated or freed.
enum class AllocationAction : std::uint8_t { kSegmentAlloc, kSegmentFree, kAlloc, kFree };

struct AllocationEvent {
  std::int64_t time_ns = 0;
  std::int32_t device = 0;
  AllocationAction action = AllocationAction::kAlloc;
  std::int32_t buffer = -1;  // the graph's buffer (alloc, free); -1 for segment events
  std::int32_t op = -1;      // the op whose start allocated / end freed it; -1 for segments
  std::int64_t address = 0;  // synthetic, deterministic (caching_allocator.hpp)
  std::int64_t size = 0;     // alloc, free: the bytes requested; segments: the segment's bytes
};

/// A buffer still allocated when the simulation ends, where it lies.
struct LiveBuffer {
  std::int32_t device = 0;
  std::int64_t address = 0;
  std::int32_t buffer = 0;
};

struct TrainingResult {
  std::vector<DeviceResult> devices;  // one per pipeline stage
  Duration step_time;
  std::int64_t num_micro_batches = 0;
  double tokens_per_s = 0.0;
  double mfu = 0.0;
  Flops model_flops;
  bool fits = false;
  std::vector<StagePlan> stages;
  OpGraph graph;
  std::vector<MemorySample> memory;  // empty unless record_timeline
  std::vector<OpRecord> ops;         // empty unless record_timeline
  // Empty unless record_allocations: every allocator event in time order, each device's
  // segments at the end (address order) and the buffers live then.
  std::vector<AllocationEvent> allocations;
  std::vector<std::vector<memory::SegmentState>> final_segments;
  std::vector<LiveBuffer> live_at_end;
  std::uint64_t num_events = 0;
};

/// Simulates `options.num_steps` steps of `setup` (a validated plan).
TrainingResult simulate_training(const TrainingSetup& setup, const SimulationOptions& options = {});

}  // namespace vramsim::training
