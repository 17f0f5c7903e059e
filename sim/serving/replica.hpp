// One model replica: its queues, KV cache, scheduler and step-time model. The simulation driver
// (serving_simulation.cpp) owns the clock and calls launch() / complete(); the replica applies a
// step's effects to its requests and reports tokens and finished requests to the metrics.
//
// Pipeline parallelism: up to `pipeline_depth` batches are in flight at once (vLLM's virtual
// engines); a request in an unfinished batch is marked in_flight and not scheduled again until
// its batch completes; a new batch may enter once the previous one's stage interval has passed.
//
// Async scheduling (ReplicaConfig::async_scheduling, vLLM's --async-scheduling): the scheduler
// plans step N+1 while step N runs, so
//   - a request that arrives while a step runs is first scheduled one step later than a
//     synchronous scheduler would: the plan made when step N completes (the step N+2 of the
//     engine's count) sees only the arrivals up to step N's start, when vLLM ran it;
//   - a request that finishes in step N keeps its KV blocks and its max_num_seqs seat through
//     that plan (vLLM frees them in update_from_output of step N, after scheduling N+1), and is
//     reported finished once they are released (at the same simulated time);
//   - the host part of the step time (StepTime::overhead) overlaps the GPU part of the step
//     before it, so a step that starts as the previous one ends takes max(GPU, host);
//   - a disaggregated decode instance learns of landed KV two steps later (KvPoll below);
//   - with pipeline parallelism (vLLM 0.16 on: PRs #32359 and #32618) the engine plans a batch
//     whenever its queue of pp batches has room: a batch that enters while others are in
//     flight was planned when the last one was submitted (it sees the arrivals up to then),
//     and its host part overlaps their GPU work; when a full queue's oldest batch completes,
//     its output is processed first (its finished requests release their blocks and seats
//     then) and the next batch is planned with what has arrived. A request is still never in
//     two batches at once (its next token waits for its batch to leave the last stage).
// When the delayed plan is empty, vLLM's step N+1 was empty (it costs nothing) and the engine
// schedules again at once with everything it has: so does the replica. Sources (vllm-project/
// vllm): vllm/v1/engine/core.py, EngineCore.step_with_batch_queue (read at commit 00080ee1);
// vllm/v1/core/sched/async_scheduler.py, output placeholders (commit 014b2350); the max_tokens
// skip in vllm/v1/core/sched/scheduler.py (PR #27922, before the 0.14.0 default); the design,
// PR #19970. analysis/validation/vllm_bench.md, "Async scheduling", has the details.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/serving/execution_time_model.hpp"
#include "sim/serving/kv_cache_manager.hpp"
#include "sim/serving/router.hpp"
#include "sim/serving/scheduler.hpp"

namespace vramsim::serving {

class ServingMetrics;

// KvPoll: how a disaggregated decode instance learns that a request's KV has landed
// (Replica::kv_landed), for sync and async scheduling alike. Read in vllm-project/vllm:
//   * the worker asks the connector which receives are done once per step, in execute_model:
//     KVConnectorModelRunnerMixin._get_kv_connector_output (vllm/v1/worker/
//     kv_connector_model_runner_mixin.py) calls get_finished (get_transfer_results in later
//     releases) on leaving the context that wraps the forward pass, just after the forward is
//     launched, and puts the answer in that step's ModelRunnerOutput (kv_connector_output);
//     NixlConnectorWorker answers it by polling each read's state (check_xfer_state), so a
//     read that completes after that call is reported by the next step's;
//   * a step with nothing to run polls too (kv_connector_no_forward), at once: an instance
//     with nothing else to do sees a landed KV at once;
//   * Scheduler.update_from_output (vllm/v1/core/sched/scheduler.py) hands the report to
//     _update_from_kv_xfer_finished (finished_recving_kv_req_ids), and the next schedule()
//     makes the request WAITING in _update_waiting_for_remote_kv.
// Sync (EngineCore.step): schedule(j), execute step j (its poll), update_from_output(j) at
// step j's end, schedule(j + 1): a KV reported by step j's poll joins step j + 1.
// Async (EngineCore.step_with_batch_queue, batch queue of 2): schedule(j) runs when step j - 1
// starts and the worker prepares and launches step j while step j - 1 is on the GPU (that is
// the overlap), so step j's poll is made during step j - 1; update_from_output(j) comes at
// step j's end, after schedule(j + 1): the KV joins step j + 2.
// Here a step's poll is at its schedule point (RemoteKvHook: its start when synchronous, the
// previous step's start when it follows it back to back under async scheduling) plus the
// step's host time (StepTime::overhead: scheduling, input preparation and launch, the part
// before the worker leaves the forward's context), and a KV reported by step j enters the
// waiting queue as an arrival at step j's end would (with async scheduling a lagged plan then
// sees it one step later, as vLLM's). So a KV that lands during step s synchronously joins
// step s + 1 if it lands within s's host time (before its poll), else step s + 2 (step
// s + 1's poll reports it); with async scheduling, two steps later than that.
// NOTE: the whole host time is taken to come before the poll; vLLM's forward launch with
// CUDA graphs is one replay call, so the time after it is small next to the input preparation.

struct ReplicaConfig {
  SchedulerLimits limits;
  KvCacheConfig kv;
  int pipeline_depth = 1;  // pp: batches in flight
  /// The host link's achievable rate in each direction between pinned host memory and the
  /// device (run::host_copy_rate: a calibration profile's pinned copies or the PCIe sheet times
  /// an efficiency): KV offload loads, swap-ins, LoRA adapter loads and streamed weights cross
  /// at host_to_device; KV offload stores and swap-outs at device_to_host. PCIe is full duplex.
  Bandwidth host_to_device;
  Bandwidth device_to_host;
  /// KV disk tier (kv.num_disk_blocks > 0): the local disk's sequential read and write
  /// bandwidth, given by the user (no datasheet gives them), and one block's bytes on all the
  /// replica's devices together, which write to the one disk of their node.
  Bandwidth disk_read;
  Bandwidth disk_write;
  Bytes disk_bytes_per_block;
  /// Speculative decoding (speculative.hpp): draft tokens per decoding sequence and step (0:
  /// off; the scheduler's limits.num_lookahead_tokens must equal it) and the expected tokens
  /// each decode step emits, in [1, k + 1].
  std::int64_t num_speculative_tokens = 0;
  double expected_tokens_per_step = 1.0;
  /// Weights held in host memory (--cpu-offload-gb) and copied to the device in every
  /// forward step at host_to_device, not overlapped with compute (vLLM's UVA offload reads
  /// them from pinned host memory as the layers run). Zero: none.
  Bytes streamed_weights;
  /// Multi-LoRA (limits.max_loras > 0): one adapter's share of the slots on the busiest
  /// device, copied at host_to_device when a step names an adapter not in the GPU's max_loras
  /// slots (the least recently used is replaced).
  Bytes lora_adapter_bytes;
  /// Tests: run the KV manager's O(blocks) self-check after every step.
  bool check_kv_invariants = false;
  /// vLLM's --async-scheduling (file comment; vllm/v1/core/sched/async_scheduler.py,
  /// EngineCore.step_with_batch_queue), with any pipeline_depth.
  bool async_scheduling = false;
};

/// A batch that has started.
struct Launch {
  int slot = 0;             // pass back to complete()
  Duration latency;         // until its tokens are out
  Duration interval;        // until the next batch may enter the pipeline
  std::int64_t num_tokens = 0;
  std::int64_t num_decodes = 0;
};

/// Disaggregated decode instance (serving_simulation.hpp, Disaggregation): whether vLLM's
/// schedule() call, after its running requests and the waiting requests it holds, went on to
/// the requests that wait for a remote KV reservation (they come after those: vLLM puts the
/// requests it holds back at the head of its waiting queue). vllm/v1/core/sched/scheduler.py,
/// Scheduler.schedule: the waiting loop runs only when this call preempted nothing, while
/// token_budget > 0, and breaks when len(running) == max_num_running_reqs (max_num_seqs) or at
/// the first request it cannot allocate for.
enum class RemoteKvGate : std::uint8_t {
  kOpen,        // the loop reached them: each reserves if blocks allow
  kSeatsFull,   // the running queue is at max_num_seqs
  kQueueAhead,  // it preempted, spent its token budget, or stopped at a request it holds
};

/// The time of a step's copies to and from the KV offload tier (kv_cache_manager.hpp), each
/// direction at its own rate (ReplicaConfig::host_to_device, device_to_host).
///   * store (device to host): vLLM's OffloadingConnectorWorker submits the copies of blocks a
///     step computed at the start of the next step, on a stream of their own, so they overlap
///     compute (vllm/distributed/kv_transfer/kv_connector/v1/offloading/worker.py,
///     prepare_store_kv: "defer the store to the beginning of the next engine step"); a step
///     lasts max(compute, store).
///   * load (host to device): added before the step that admits the request.
///     NOTE: vLLM loads asynchronously (the request waits in WAITING_FOR_REMOTE_KVS while other
///     requests' steps go on); charging the copy to the admitting step delays that step's other
///     requests too, an upper bound on their cost.
///   * disk tier: a disk hit is read into host memory before its host-to-device copy, both
///     before the step (LMCache's default retrieve is blocking: LocalDiskBackend.get_blocking
///     reads the file in the caller's thread, enable_async_loading defaults to False), so
///     load adds blocks_disk_read * disk_bytes_per_block / disk_read. Writes to disk are
///     asynchronous (LocalDiskBackend.submit_put_task queues async_save_bytes_to_disk on its
///     own thread pool) and never delay a step: they queue on the disk at disk_write one after
///     another (disk_write_busy, disk_write_backlog_peak report how busy it is). NOTE: reads
///     do not wait behind queued writes (LMCache's prefetch jobs outrank put jobs, priority 0
///     over 2, and a blocking read bypasses the queue), and a block counts as on disk from
///     the step that wrote it (LMCache indexes it once its write completes); a step's writes
///     join the queue when the step starts, not when its compute and host copy end, so the
///     backlog reads at most one step high.
///   * LMCache (kv.offload_backend kLmcache) blocks on both: its retrieve runs in
///     start_load_kv before the forward and its store in wait_for_save after it, each ending in
///     a stream synchronize (vLLM's lmcache_integration/vllm_v1_adapter.py with use_layerwise
///     off, LMCache's default; LMCache's VLLMPagedMemGPUConnectorV2.batched_to_gpu /
///     from_gpu synchronize load_stream / store_stream, lmcache/v1/gpu_connector/
///     gpu_connectors.py), and its store stream waits for the forward (wait_stream on the
///     current stream). So a step lasts load + compute + store: the store is added, not
///     overlapped. The copies run at the same pinned host-link rates.
struct OffloadCost {
  Duration load = Duration::zero();
  Duration store = Duration::zero();
};

class Replica {
 public:
  Replica(std::int32_t index, const ReplicaConfig& config, std::unique_ptr<BatchScheduler> scheduler,
          const ExecutionTimeModel& time_model);

  std::int32_t index() const { return index_; }
  /// Adds an arriving request to the waiting queue.
  void enqueue(Request& r);
  /// Disaggregated decode instance (serving_simulation.hpp, Disaggregation): reserves the KV
  /// blocks of `r`'s prompt before its KV arrives from a prefill instance, as vLLM's scheduler
  /// does for a request in WAITING_FOR_REMOTE_KVS. `r` must have num_computed_tokens =
  /// prompt_tokens - 1 and hold no blocks here. Returns false, changing nothing, when the free
  /// queue is short (with limits.reserve_full_isl, the same whole-sequence test as admission).
  bool reserve_remote_kv(const Request& r);
  /// How the last plan() (launch()) left its waiting loop, for the requests waiting for a
  /// remote KV reservation (RemoteKvGate). kOpen before the first plan.
  RemoteKvGate remote_kv_gate() const { return remote_kv_gate_; }
  /// The KV of `r`, for the blocks reserve_remote_kv reserved, landed at `landed` (<= the
  /// current time). The scheduler learns of it from the KV connector's poll (KvPoll below);
  /// then `r` joins the waiting queue behind the waiting requests that hold their blocks too,
  /// ahead of the others (vLLM puts requests it has allocated for back at the head of its
  /// waiting queue), and its admission needs no new block.
  void kv_landed(Request& r, SimTime landed);
  /// Disaggregated decode instance: called at the end of each vLLM schedule() call a plan()
  /// models (two when the first had nothing to run: the second comes at once, after the empty
  /// step), with how its waiting loop ended (RemoteKvGate) and when vLLM made that call: the
  /// plan's time, or with async scheduling, for a step that follows the last one back to back,
  /// the last step's start. It reserves remote KV then (DisaggregatedHandover::
  /// reserve_at_schedule), and may call kv_landed for a transfer that has landed already.
  using RemoteKvHook = std::function<void(RemoteKvGate gate, SimTime scheduled)>;
  void set_remote_kv_hook(RemoteKvHook hook) { remote_kv_hook_ = std::move(hook); }
  /// Whether a new batch may start (a free pipeline slot and anything not in flight to run).
  bool can_launch() const;
  /// Runs the scheduler and starts the batch at `now`; nullopt when nothing can run now.
  /// The same as plan() then start() with the time model's step time of the planned batch.
  std::optional<Launch> launch(SimTime now);
  /// The first half of launch(), for a lock-stepped data-parallel group whose step time
  /// depends on every rank's batch: runs the scheduler into a free slot and returns the batch
  /// to run, or nullptr when nothing can run now (the slot stays free). A non-null plan must
  /// be started with start() before anything else is planned or launched.
  const BatchShape* plan(SimTime now);
  /// Starts the planned batch at `now` with step time `t` (the group's), adding this rank's
  /// own swap and offload copies as launch() does.
  Launch start(SimTime now, const StepTime& t);
  /// Applies a completed batch at time `now`: tokens computed and generated, finished requests
  /// released (their KV freed) and appended to `finished`. With async scheduling finished
  /// requests are held until the next plan() instead (take_released()).
  void complete(int slot, SimTime now, ServingMetrics& metrics, std::vector<Request*>& finished);
  /// Async scheduling: appends to `out` the finished requests the last plan() released (their
  /// KV freed, their seat given up) and forgets them. Their finish time is their last step's
  /// end. Empty without async scheduling.
  void take_released(std::vector<Request*>& out);

  ReplicaView view() const;
  const KvCacheManager& kv() const { return kv_; }
  std::int64_t num_waiting() const;
  std::int64_t num_running() const;
  std::int64_t num_in_flight() const { return num_in_flight_; }
  std::int64_t num_unfinished() const { return num_unfinished_; }
  std::int64_t num_steps() const { return num_steps_; }
  std::int64_t num_preemptions() const { return num_preemptions_; }
  /// Disk tier: the time the disk spent writing (all steps), and the largest queue of writes
  /// not yet done, as time, seen when a step added to it.
  Duration disk_write_busy() const { return disk_write_busy_; }
  Duration disk_write_backlog_peak() const { return disk_write_backlog_peak_; }

 private:
  OffloadCost offload_cost(const OffloadTraffic& traffic) const;
  /// Moves the staged arrivals (async scheduling) and the requests whose landed KV was
  /// reported (KvPoll) up to `cutoff` into the waiting queue.
  void admit_arrivals(SimTime cutoff);
  /// KvPoll: reports the KV that landed up to `poll`, known to the scheduler from `known`.
  void report_landed(SimTime poll, SimTime known);
  /// After a schedule() call: sets remote_kv_gate_ and calls the remote KV hook.
  void end_schedule_call(const StepPlan& plan);
  /// Async scheduling: frees the held finished requests and moves them to released_.
  void release_finishing();

  std::int32_t index_;
  ReplicaConfig config_;
  std::unique_ptr<BatchScheduler> scheduler_;
  const ExecutionTimeModel& time_model_;
  KvCacheManager kv_;
  ReplicaQueues queues_;
  std::vector<StepPlan> slots_;
  std::vector<int> free_slots_;
  std::int64_t num_in_flight_ = 0;
  std::int64_t num_unfinished_ = 0;
  std::int64_t outstanding_tokens_ = 0;
  std::int64_t num_steps_ = 0;
  std::int64_t num_preemptions_ = 0;
  int planned_slot_ = -1;  // plan() filled this slot; start() launches it
  RemoteKvGate remote_kv_gate_ = RemoteKvGate::kOpen;  // set by plan()
  // Async scheduling: arrivals not yet seen by the scheduler, in arrival order; finished
  // requests still holding their KV and seat; those released by the last plan(); the last
  // step's start and end; whether the planned step overlaps its host time with the last one.
  std::deque<Request*> arrived_;
  std::vector<Request*> finishing_;
  std::vector<Request*> released_;
  // KvPoll: KV landed, not yet reported (with its landing time); reported, with the time the
  // scheduler knows of it; per pipeline slot, the poll time of the step in it.
  std::deque<std::pair<Request*, SimTime>> landed_;
  std::deque<std::pair<Request*, SimTime>> kv_reported_;
  std::vector<SimTime> slot_poll_;
  SimTime schedule_point_ = SimTime::zero();  // the last schedule() call's (RemoteKvHook)
  RemoteKvHook remote_kv_hook_;
  SimTime last_start_ = SimTime::zero();
  SimTime last_end_ = SimTime::zero();
  bool overlap_host_ = false;
  SimTime disk_free_at_ = SimTime::zero();  // when the disk has written all queued blocks
  Duration disk_write_busy_ = Duration::zero();
  Duration disk_write_backlog_peak_ = Duration::zero();
  /// The adapters in the GPU's LoRA slots with the step each was last used in (LRU).
  std::vector<std::pair<std::int32_t, std::int64_t>> lora_slots_;
  std::int64_t num_adapter_loads_ = 0;
  std::int64_t sum_step_adapters_ = 0;
 public:
  /// Multi-LoRA: adapters copied into the GPU slots, and distinct adapters summed over steps.
  std::int64_t num_adapter_loads() const { return num_adapter_loads_; }
  std::int64_t sum_step_adapters() const { return sum_step_adapters_; }
};

}  // namespace vramsim::serving
