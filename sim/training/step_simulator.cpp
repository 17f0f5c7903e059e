#include "sim/training/step_simulator.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/core/simulation.hpp"
#include "sim/memory/budget.hpp"
#include "sim/memory/caching_allocator.hpp"

namespace vramsim::training {

namespace {

struct StreamState {
  std::vector<std::int32_t> queue;
  std::size_t head = 0;
  bool busy = false;
};

class Runner {
 public:
  Runner(const OpGraph& g, bool record, bool record_allocations)
      : g_(g), record_(record), record_allocations_(record_allocations) {
    const std::size_t n = g.ops.size();
    remaining_.resize(n);
    last_dep_.assign(n, -1);
    start_.assign(n, -1);
    end_.assign(n, -1);
    std::vector<std::int32_t> count(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
      remaining_[i] = static_cast<std::int32_t>(g.ops[i].deps.size());
      for (std::int32_t d : g.ops[i].deps) ++count[static_cast<std::size_t>(d) + 1];
    }
    for (std::size_t i = 0; i < n; ++i) count[i + 1] += count[i];
    dependents_.resize(static_cast<std::size_t>(count[n]));
    offsets_ = count;
    std::vector<std::int32_t> fill(count.begin(), count.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::int32_t d : g.ops[i].deps) {
        dependents_[static_cast<std::size_t>(fill[static_cast<std::size_t>(d)]++)] =
            static_cast<std::int32_t>(i);
      }
    }
    streams_.resize(static_cast<std::size_t>(g.num_devices) * kNumStreams);
    for (std::size_t i = 0; i < n; ++i) {
      stream_of(g.ops[i]).queue.push_back(static_cast<std::int32_t>(i));
    }
    allocators_.resize(static_cast<std::size_t>(g.num_devices));
    if (record_allocations_) {
      segment_logs_.resize(allocators_.size());
      for (std::size_t d = 0; d < allocators_.size(); ++d) {
        allocators_[d].record_segments(&segment_logs_[d]);
      }
    }
    if (record_) {  // one sample per allocation and free (each tensor its own: reserve once)
      std::size_t changes = 0;
      for (const Op& op : g.ops) changes += op.allocs.size() + op.frees.size();
      samples_.reserve(changes);
    }
    categories_.assign(static_cast<std::size_t>(g.num_devices), CategoryBytes{});
    block_.assign(g.buffers.size(), -1);
    devices_.resize(static_cast<std::size_t>(g.num_devices));
    step_end_.assign(n, false);
    for (const auto& ends : g.step_end_ops) {
      for (std::int32_t id : ends) step_end_[static_cast<std::size_t>(id)] = true;
    }
  }

  void run() {
    for (std::size_t s = 0; s < streams_.size(); ++s) try_start(s);
    sim_.run([&](const auto& event) { complete(event.payload); });
    for (std::size_t i = 0; i < g_.ops.size(); ++i) {
      VRAMSIM_CHECK(end_[i] >= 0, "op {} ({}) never ran: the op graph has a cycle", i,
                    op_name(g_.ops[i]));
    }
  }

  const OpGraph& g_;
  bool record_;
  bool record_allocations_;
  Simulation<std::int32_t> sim_{0};
  std::vector<std::int32_t> remaining_, last_dep_, offsets_, dependents_;
  std::vector<std::int64_t> start_, end_;
  std::vector<StreamState> streams_;
  std::vector<memory::CachingAllocator> allocators_;
  std::vector<CategoryBytes> categories_;
  std::vector<memory::CachingAllocator::BlockId> block_;
  std::vector<DeviceResult> devices_;
  std::vector<MemorySample> samples_;
  std::vector<bool> step_end_;
  std::vector<AllocationEvent> allocations_;
  std::vector<std::vector<memory::SegmentEvent>> segment_logs_;  // drained after each call

 private:
  StreamState& stream_of(const Op& op) {
    return streams_[static_cast<std::size_t>(op.device) * kNumStreams +
                    static_cast<std::size_t>(op.stream)];
  }

  void try_start(std::size_t s) {
    StreamState& st = streams_[s];
    if (st.busy || st.head >= st.queue.size()) return;
    const std::int32_t id = st.queue[st.head];
    if (remaining_[static_cast<std::size_t>(id)] > 0) return;
    st.busy = true;
    ++st.head;
    const Op& op = g_.ops[static_cast<std::size_t>(id)];
    start_[static_cast<std::size_t>(id)] = sim_.now().nanoseconds();
    for (std::int32_t b : op.allocs) allocate(b, id);
    sim_.schedule_after(op.duration, Phase::kCompletion, id);
  }

  void complete(std::int32_t id) {
    const Op& op = g_.ops[static_cast<std::size_t>(id)];
    end_[static_cast<std::size_t>(id)] = sim_.now().nanoseconds();
    for (std::int32_t b : op.frees) release(b, id);
    if (step_end_[static_cast<std::size_t>(id)]) {
      const auto d = static_cast<std::size_t>(op.device);
      devices_[d].allocated_after_step.push_back(allocators_[d].allocated());
    }
    stream_of(op).busy = false;
    try_start(static_cast<std::size_t>(op.device) * kNumStreams +
              static_cast<std::size_t>(op.stream));
    for (std::int32_t k = offsets_[static_cast<std::size_t>(id)];
         k < offsets_[static_cast<std::size_t>(id) + 1]; ++k) {
      const std::int32_t dep = dependents_[static_cast<std::size_t>(k)];
      last_dep_[static_cast<std::size_t>(dep)] = id;
      if (--remaining_[static_cast<std::size_t>(dep)] == 0) {
        const Op& d = g_.ops[static_cast<std::size_t>(dep)];
        try_start(static_cast<std::size_t>(d.device) * kNumStreams +
                  static_cast<std::size_t>(d.stream));
      }
    }
  }

  /// The segment events the allocator logged in the last call, then `action` on buffer `b`.
  void log_allocation(std::size_t d, AllocationAction action, std::int32_t b, std::int32_t op,
                      std::int64_t address, Bytes size) {
    const std::int64_t now = sim_.now().nanoseconds();
    const auto device = static_cast<std::int32_t>(d);
    for (const memory::SegmentEvent& e : segment_logs_[d]) {
      allocations_.push_back({now, device,
                              e.alloc ? AllocationAction::kSegmentAlloc
                                      : AllocationAction::kSegmentFree,
                              -1, -1, e.address, e.size});
    }
    segment_logs_[d].clear();
    allocations_.push_back({now, device, action, b, op, address, size.count()});
  }

  void allocate(std::int32_t b, std::int32_t op) {
    const Buffer& buf = g_.buffers[static_cast<std::size_t>(b)];
    const auto d = static_cast<std::size_t>(buf.device);
    // On the stream of the op that allocates it: that stream's cache (caching_allocator.hpp).
    const auto stream = static_cast<std::int32_t>(g_.ops[static_cast<std::size_t>(op)].stream);
    const auto block = allocators_[d].allocate(buf.size, stream);
    VRAMSIM_CHECK(block.has_value(), "unlimited allocator refused {} bytes", buf.size.count());
    block_[static_cast<std::size_t>(b)] = *block;
    if (record_allocations_) {
      log_allocation(d, AllocationAction::kAlloc, b, op, allocators_[d].block_address(*block),
                     buf.size);
    }
    categories_[d][static_cast<std::size_t>(buf.category)] += buf.size;
    changed(d);
  }

  void release(std::int32_t b, std::int32_t op) {
    const Buffer& buf = g_.buffers[static_cast<std::size_t>(b)];
    const auto d = static_cast<std::size_t>(buf.device);
    VRAMSIM_CHECK(block_[static_cast<std::size_t>(b)] >= 0, "buffer {} freed before allocation", b);
    if (record_allocations_) {
      log_allocation(d, AllocationAction::kFree, b, op,
                     allocators_[d].block_address(block_[static_cast<std::size_t>(b)]), buf.size);
    }
    allocators_[d].free(block_[static_cast<std::size_t>(b)]);
    block_[static_cast<std::size_t>(b)] = -1;
    categories_[d][static_cast<std::size_t>(buf.category)] -= buf.size;
    changed(d);
  }

  void changed(std::size_t d) {
    const memory::CachingAllocator& a = allocators_[d];
    DeviceResult& r = devices_[d];
    VRAMSIM_CHECK(a.allocated() <= a.reserved(), "allocated exceeds reserved on device {}", d);
    const CategoryBytes& c = categories_[d];
    if (a.allocated() > r.peak_allocated) {
      r.peak_allocated = a.allocated();
      r.at_peak = c;
    }
    r.peak_reserved = max(r.peak_reserved, a.reserved());
    r.activation_peak =
        max(r.activation_peak, c[static_cast<std::size_t>(MemoryCategory::kActivations)]);
    if (!record_) return;
    MemorySample s;
    s.time_ns = sim_.now().nanoseconds();
    s.device = static_cast<std::int32_t>(d);
    for (int k = 0; k < kNumMemoryCategories; ++k) {
      s.bytes[static_cast<std::size_t>(k)] = c[static_cast<std::size_t>(k)].count();
    }
    s.allocated = a.allocated().count();
    s.reserved = a.reserved().count();
    samples_.push_back(s);
  }
};

bool is_compute_kernel(OpKind k) {
  return k == OpKind::kForward || k == OpKind::kRecompute || k == OpKind::kBackward ||
         k == OpKind::kOptimizer;
}

// Step time, tokens of data per second and MFU from result.step_time.
void set_rates(TrainingResult& result, const TrainingSetup& setup) {
  const double tokens = static_cast<double>(setup.plan.effective_global_batch()) *
                        setup.plan.data_tokens_per_sequence();
  const double seconds = result.step_time.seconds();
  result.tokens_per_s = seconds > 0 ? tokens / seconds : 0.0;
  result.model_flops = model_flops_per_step(setup);
  const DType dt = setup.plan.precision == Precision::kFp32        ? DType::kFp32
                   : setup.plan.precision == Precision::kFp16Mixed ? DType::kFp16
                                                                   : DType::kBf16;
  const double peak = hardware::peak_flop_rate(setup.device, dt).per_second();
  result.mfu = seconds > 0 ? result.model_flops.count() /
                                 (seconds * peak * static_cast<double>(setup.plan.num_gpus))
                           : 0.0;
}

// One simulation with the plan's shapes (plan.shaped_seq_len()).
TrainingResult simulate_shaped(const TrainingSetup& setup, const SimulationOptions& options) {
  TrainingResult result;
  result.stages = plan_stages(setup);
  result.graph = build_step_graph(setup, result.stages, std::max(1, options.num_steps));
  const OpGraph& g = result.graph;
  // The simulated clock is int64 nanoseconds (292 years). The makespan never exceeds the sum of
  // every op's duration (something always runs until the graph is done), so a sum under the
  // limit is safe; above it the plan is refused as input, not left to overflow.
  long double total_ns = 0.0L;
  long double compute_ns = 0.0L;
  for (const Op& op : g.ops) {
    const auto ns = static_cast<long double>(op.duration.nanoseconds());
    total_ns += ns;
    if (is_compute_kernel(op.kind)) compute_ns += ns;
  }
  constexpr long double kMaxSimulatedNs = 1e18L;  // ~31.7 years
  if (total_ns > kMaxSimulatedNs && total_ns - compute_ns > compute_ns) {
    // Transfers, not kernels, overflow the clock: a link of the node or cluster sheets (or the
    // scenario's network) is absurdly slow, whatever the batch.
    throw ConfigError("hardware.topology",
                      fmt::format("the step's transfers add up to {:.3g} s on {} (its kernels "
                                  "{:.3g} s): more than the simulator's clock holds (1e9 s); a "
                                  "link bandwidth or latency of the node, cluster or network "
                                  "settings is implausible",
                                  static_cast<double>((total_ns - compute_ns) * 1e-9L),
                                  setup.device.id, static_cast<double>(compute_ns * 1e-9L)));
  }
  if (total_ns > kMaxSimulatedNs) {
    throw ConfigError("batch.seq_len",
                      fmt::format("the step's ops add up to {:.3g} s of device time on {}: more "
                                  "than the simulator's clock holds (1e9 s); use fewer tokens per "
                                  "step or more GPUs",
                                  static_cast<double>(total_ns * 1e-9L), setup.device.id));
  }
  Runner run(g, options.record_timeline, options.record_allocations);
  run.run();
  result.num_events = run.sim_.num_processed();

  // Step boundaries: the latest end of any device's last op of each step.
  std::vector<std::int64_t> step_end;
  for (const auto& ends : g.step_end_ops) {
    std::int64_t t = 0;
    for (std::int32_t id : ends) t = std::max(t, run.end_[static_cast<std::size_t>(id)]);
    step_end.push_back(t);
  }
  const int last = g.num_steps - 1;
  const std::int64_t w0 = last > 0 ? step_end[static_cast<std::size_t>(last - 1)] : 0;
  const std::int64_t w1 = step_end[static_cast<std::size_t>(last)];
  result.step_time = Duration::from_nanoseconds(w1 - w0);

  const memory::RuntimeOverheads overheads =
      memory::default_overheads(hardware::has_nvls(setup.device));
  const Bytes non_allocator =
      overheads.cuda_context + (setup.plan.num_gpus > 1 ? overheads.non_torch_comm : Bytes(0));

  result.devices = std::move(run.devices_);
  std::vector<std::int64_t> cursor(result.devices.size(), w0), comm_end(result.devices.size(), w0);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    if (op.step != last || op.kind == OpKind::kSetup) continue;
    DeviceResult& r = result.devices[static_cast<std::size_t>(op.device)];
    const std::int64_t start = run.start_[i], end = run.end_[i];
    if (op.stream != Stream::kCompute) {
      if (op.stream == Stream::kComm)
        comm_end[static_cast<std::size_t>(op.device)] =
            std::max(comm_end[static_cast<std::size_t>(op.device)], end);
      continue;
    }
    std::int64_t& c = cursor[static_cast<std::size_t>(op.device)];
    if (start > c) {
      const std::int32_t why = run.last_dep_[i];
      const bool comm =
          why >= 0 && is_data_parallel_comm(g.ops[static_cast<std::size_t>(why)].kind);
      (comm ? r.exposed_comm : r.bubble) += Duration::from_nanoseconds(start - std::max(c, w0));
    }
    // Pipeline sends block the compute stream (step_graph.cpp): exposed communication.
    Duration& bucket = is_compute_kernel(op.kind)    ? r.compute
                       : op.kind == OpKind::kSend    ? r.exposed_comm
                       : op.kind == OpKind::kCpComm  ? r.cp_comm
                       : op.kind == OpKind::kEpComm  ? r.ep_comm
                                                     : r.tp_comm;
    bucket += Duration::from_nanoseconds(end - start);
    c = std::max(c, end);
  }
  for (std::size_t d = 0; d < result.devices.size(); ++d) {
    DeviceResult& r = result.devices[d];
    const StagePlan& st = result.stages[d];
    r.stage = static_cast<int>(d);
    const std::int64_t comm_tail = std::max<std::int64_t>(0, std::min(comm_end[d], w1) - cursor[d]);
    r.exposed_comm += Duration::from_nanoseconds(comm_tail);
    r.bubble += Duration::from_nanoseconds(std::max<std::int64_t>(0, w1 - cursor[d] - comm_tail));
    r.step_time = result.step_time;
    r.model_state = st.state.total();
    r.non_allocator = non_allocator;
    r.capacity = setup.device.memory_total;
    const Bytes need = r.peak_reserved + r.non_allocator;
    r.fits = need <= r.capacity;
    r.shortfall = r.fits ? Bytes(0) : need - r.capacity;
    r.num_segments = run.allocators_[d].num_segments();
  }
  result.fits = std::all_of(result.devices.begin(), result.devices.end(),
                            [](const DeviceResult& r) { return r.fits; });
  result.num_micro_batches = setup.plan.num_micro_batches();
  set_rates(result, setup);
  if (options.record_allocations) {
    result.allocations = std::move(run.allocations_);
    for (std::size_t d = 0; d < run.allocators_.size(); ++d) {
      run.allocators_[d].record_segments(nullptr);
      result.final_segments.push_back(run.allocators_[d].segments());
    }
    for (std::size_t b = 0; b < g.buffers.size(); ++b) {
      if (run.block_[b] < 0) continue;
      const auto d = static_cast<std::size_t>(g.buffers[b].device);
      result.live_at_end.push_back({static_cast<std::int32_t>(d),
                                    run.allocators_[d].block_address(run.block_[b]),
                                    static_cast<std::int32_t>(b)});
    }
  }
  if (options.record_timeline) {
    result.memory = std::move(run.samples_);
    result.ops.reserve(g.ops.size());
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
      result.ops.push_back({run.start_[i], run.end_[i], static_cast<std::int32_t>(i)});
    }
  }
  return result;
}

}  // namespace

TrainingResult simulate_training(const TrainingSetup& setup, const SimulationOptions& options) {
  TrainingResult result = simulate_shaped(setup, options);
  if (!setup.plan.pads_samples()) return result;
  // Padded samples: memory is that of the longest micro-batch (the run above, whose timeline
  // and allocations are kept); time is that of the mean one, each micro-batch padded to the
  // expected longest of its samples. NOTE: the step time at the mean padded length, not the
  // mean of step times over padded lengths (attention is quadratic in it: slightly low).
  TrainingSetup mean = setup;
  mean.plan.shape_mean_batch = true;
  if (mean.plan.shaped_seq_len() == setup.plan.shaped_seq_len()) return result;
  const TrainingResult timed =
      simulate_shaped(mean, {.num_steps = options.num_steps, .record_timeline = false});
  result.step_time = timed.step_time;
  for (std::size_t d = 0; d < result.devices.size(); ++d) {
    DeviceResult& r = result.devices[d];
    const DeviceResult& t = timed.devices[d];
    r.step_time = t.step_time;
    r.compute = t.compute;
    r.tp_comm = t.tp_comm;
    r.cp_comm = t.cp_comm;
    r.ep_comm = t.ep_comm;
    r.exposed_comm = t.exposed_comm;
    r.bubble = t.bubble;
  }
  set_rates(result, setup);
  return result;
}

}  // namespace vramsim::training
