// The serving simulation: requests stream in from a TraceSource, a router places each on a
// replica, replicas run steps (scheduler + KV cache + step-time model) on the discrete-event
// engine, and metrics accumulate. Deterministic for a given trace, setup and seed.
//
// Event order at equal times (core/event_queue.hpp): step completions, then arrivals, then
// scheduling decisions, so a request arriving exactly when a step ends is seen by the next step.
// Memory is proportional to requests in flight: the trace is pulled one record at a time and a
// finished request's object is recycled once the observer has seen it.
//
// Clients (ClientLoop): by default the load is open loop, each request sent at its trace arrival.
// With max_concurrency = N the requests pass a client-side gate of N slots first, as
// `vllm bench serve --max-concurrency N` drives a server (vllm/benchmarks/serve.py, benchmark():
// `async with semaphore: output = await request_func(...)`, an asyncio.Semaphore(N) around each
// request, waiters served in order). A request is sent when it is due and a slot is free; it
// holds the slot until its last token (or its rejection), and the slot is free again
// think_time later. Its arrival, the origin of TTFT and E2E, is when it is sent: vLLM's
// request_func takes its start time inside the semaphore, and the wait before it is recorded
// apart as client_queue_time. send_all_at_start makes every request due at time zero (vLLM's
// default --request-rate inf: get_request yields all at once), which with N slots is N
// closed-loop clients, each sending its next request when its previous one ends + think time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/serving/execution_time_model.hpp"
#include "sim/serving/replica.hpp"
#include "sim/serving/router.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/serving_metrics.hpp"
#include "sim/serving/trace_source.hpp"

namespace vramsim::serving {

/// The client side of the load (see the file comment). max_concurrency 0: open loop, no cap.
struct ClientLoop {
  std::int32_t max_concurrency = 0;
  /// A slot freed by a finished request is free again this much later (a client's think time).
  Duration think_time = Duration::zero();
  /// Every request is due at time zero, its trace arrival ignored (needs max_concurrency > 0).
  bool send_all_at_start = false;
  bool closed() const { return max_concurrency > 0; }
};

/// How many requests may be in the system at once (arrived, not yet finished) by default.
/// Each is held in memory (about 180 bytes measured on a 10^8-request burst, more with prefix
/// hashes), so an arrival burst that outpaces the replicas, such as 10^8 requests at t = 0,
/// would otherwise exhaust the machine: 4 million is about 0.7 GB. The serve setting
/// serving.max_requests_in_system (--max-requests-in-system) raises or lowers it.
inline constexpr std::int64_t kDefaultMaxRequestsInSystem = 4'000'000;

/// Ends a run as soon as the p99 (LatencyHistogram::quantile(kQuantile)) of one of `objectives`
/// over the finished requests is sure to exceed its target, so that a search that only needs
/// the verdict "every p99 <= its target" (plan serve, capacity searches) does not simulate the
/// rest of a run that has already missed.
///
/// Exactness: a finished request surely violates an objective when the lowest value of its
/// latency's histogram bucket is above the target (LatencyHistogram::bucket_floor). With V such
/// requests among the N the full run would finish, the nearest-rank p99 (rank k = ceil(0.99 N))
/// lies in a surely-violating bucket once N - V < k, and the reported quantile (the bucket's
/// midpoint clamped to [min, max]) is then above the target too. N is unknown during the run,
/// but bounded by `max_requests` (and, once the trace has no more records, by the requests
/// created); the run stops when V >= max over n <= bound of (n - rank(n) + 1), which holds for
/// every N the full run could end with. So a stopped run's verdict is the full run's, exactly;
/// its metrics are those of the requests finished before the stop. P99StopRule
/// (p99_stop_rule.hpp) applies the rule.
struct P99Stop {
  static constexpr double kQuantile = 0.99;
  SloSpec objectives;  // p99 targets (at least one)
  /// An upper bound on the requests the run finishes (the workload's size); 0: unknown, the
  /// rule then applies from the moment the trace has no more records.
  std::int64_t max_requests = 0;
};

/// Disaggregated prefill/decode (vLLM's P/D with a KV connector, xPyD): `num_prefill` prefill
/// instances run each request's prompt and first token (the proxy sends them max_tokens = 1),
/// then the prompt's KV crosses `link` to a decode instance (the ServingSetup's num_replicas,
/// with ServingSetup::replica), which runs the rest. Each pool has its own router instance
/// (ServingSetup::router) and its own KV cache, limits and step-time model.
///
/// The decode instance receives the KV of prompt_tokens - 1 tokens' worth of computed state
/// and computes the last prompt token in its first step, as vLLM's scheduler does whenever all
/// of a prompt's KV comes from outside (prefix cache or connector: "recompute the last token to
/// obtain logits"); that step samples the first token the client streams. TTFT is therefore
/// arrival -> that token on the decode instance, which includes the prefill, the transfer and
/// one decode-pool step (vLLM's toy proxy discards the prefill instance's token and streams
/// the decode instance's response). The prefill instance's own first token is reported apart
/// (DisaggregatedStats::prefill_ttft).
///
/// Transfer: bytes = kv_bytes_per_token * prompt_tokens (what lands on the decode instance's
/// devices); the transfer uses `num_link_lanes` links at once (min of the two TP degrees: each
/// rank pair has its own), so it takes link.latency + (bytes / lanes) / link.bandwidth. The
/// transfers into one decode instance queue FIFO on its inbound links (one at a time; the
/// latency of the next overlaps). A decode-pool preemption by recompute recomputes prompt
/// and output there, as vLLM's decode instance does locally.
///
/// Block reservation before the transfer, as vLLM's P/D with the NIXL connector does (read in
/// vllm-project/vllm: v1/core/sched/scheduler.py, Scheduler.schedule and
/// _update_waiting_for_remote_kv; distributed/kv_transfer/kv_connector/v1/nixl_connector.py,
/// NixlConnectorScheduler; v1/worker/kv_connector_model_runner_mixin.py; v1/engine/core.py,
/// EngineCoreProc.run_busy_loop):
///   * the proxy's request joins the decode instance's waiting queue (add_request) with
///     do_remote_prefill; the engine core's busy loop blocks on its input queue only while it
///     has no request, else steps (schedule(), then the step) back to back, so a request handed
///     over while a step runs is seen at that step's end, and one handed to an idle instance
///     at once;
///   * in schedule(), the waiting loop runs only if no running request was preempted in this
///     call, while token_budget > 0, and breaks when len(running) == max_num_running_reqs
///     (max_num_seqs); the requests ahead of the fresh ones in the waiting queue (preempted
///     ones, and those whose KV arrived, which were put back at its head) are admitted or
///     stop it first;
///   * for the remote-prefill request the connector's get_num_new_matched_tokens answers all
///     of its prompt tokens, loaded asynchronously; allocate_slots for them (no new tokens, no
///     budget) failing stops the waiting loop for that call; on success
///     update_state_after_alloc records the request's block ids as those to read the remote
///     KV into, and the request becomes WAITING_FOR_REMOTE_KVS and is put back into the
///     waiting queue (skipped_waiting_requests), not the running one: it takes no
///     max_num_seqs seat while its KV is on its way;
///   * the reads start when the worker runs that call's scheduler output (start_load_kv in
///     _get_kv_connector_output, just after the forward pass is launched, or at once without
///     one: kv_connector_no_forward), so at that scheduling point (the host's launch time is
///     not modelled);
///   * the worker reports the reads done in a step's output (get_finished, polled once per
///     step just after its forward pass is launched: replica.hpp, KvPoll), update_from_output
///     records them, and the next schedule() sees them in _update_waiting_for_remote_kv: the
///     request is WAITING again with its tokens computed but the last one, and its admission
///     needs a seat but no new block.
/// Here: a request handed over waits in its decode instance's reservation queue
/// (DisaggregatedHandover); at each scheduling point of that instance (Replica::launch at a
/// step's end, or at once when it is idle) the plan's RemoteKvGate says whether vLLM's waiting
/// loop would reach the reservations (running below max_num_seqs, no preemption, budget left,
/// its waiting queue all admitted); if so they reserve blocks in hand-over order
/// (Replica::reserve_remote_kv), the first that does not fit holding back the others, and each
/// reservation starts its transfer then. A full decode pool or a full running queue therefore
/// delays transfers (DisaggregatedStats::reserve_wait). A landed KV is reported by the decode
/// instance's first step whose poll comes after it (its schedule point), or at once when the
/// instance has nothing else to run; then the request waits ahead of fresh ones
/// (Replica::kv_landed). Async scheduling applies to both pools as to aggregated replicas
/// (ReplicaConfig::async_scheduling, each pool's own setting): on a decode instance the
/// schedule() behind a back-to-back step ran at the last step's start, so it reserves for the
/// requests handed over by then and starts their transfers then, and a landed KV joins a step
/// two steps later than with a synchronous scheduler (KvPoll). NOTE: the gate is vLLM's
/// whichever scheduler the decode pool runs; a LoRA request the scheduler skips for max_loras
/// closes it, where vLLM's loop goes on past it.
struct Disaggregation {
  std::int32_t num_prefill = 1;
  ReplicaConfig prefill;
  const ExecutionTimeModel* prefill_time_model = nullptr;  // not owned; non-null
  Bytes kv_bytes_per_token;  // all devices of a decode instance, all layers
  std::int32_t num_link_lanes = 1;
  Bandwidth link_bandwidth;  // per lane, per direction
  Duration link_latency;
};

struct ServingSetup {
  std::int32_t num_replicas = 1;
  /// --data-parallel-size: each of the num_replicas engines is this many DP ranks, each a
  /// replica of its own (scheduler, KV cache, batch) behind the router. With dp_lockstep (an
  /// MoE model: expert_parallel.hpp) the ranks of an engine step together: when any of them
  /// can run a batch all of them start a step, those with nothing to run a dummy batch of one
  /// token, the step time of each is the time model's for its batch with the group's token
  /// counts (BatchShape::dp_*), and the group's step ends when its slowest rank's does. The
  /// time model must then be built for the group (RooflineTimeModel with its
  /// ExpertParallelSetup); pipeline_depth must be 1. DpLockstepGroups (dp_lockstep_group.hpp)
  /// runs the groups.
  std::int32_t data_parallel_size = 1;
  bool dp_lockstep = false;
  /// vLLM pads every rank's batch to the group's largest (get_dp_padding) unless enforce_eager.
  bool dp_pad_to_largest = true;
  /// Past this many requests in the system at once the run throws ConfigError naming the
  /// limit and the setting that raises it (see kDefaultMaxRequestsInSystem). At least 1.
  std::int64_t max_requests_in_system = kDefaultMaxRequestsInSystem;
  ClientLoop clients;
  ReplicaConfig replica;
  std::string scheduler = "vllm";
  std::string router = "round-robin";
  /// Requests with prompt + output tokens above this are rejected (counted, recorded).
  std::int64_t max_model_len = 0;
  /// Time-series sampling period per replica; zero samples every step.
  Duration timeseries_interval = Duration::zero();
  SloSpec slo;
  std::uint64_t seed = 0;
  /// Called with the requests finished so far and the simulated clock, every
  /// kProgressEveryRequests finished requests (the CLI's progress line); it cannot change the
  /// run. Empty: not called.
  std::function<void(std::int64_t finished, SimTime now)> progress = {};
  /// When set, the run may end early once a p99 objective is sure to be missed (P99Stop).
  std::optional<P99Stop> p99_stop;
  /// When set, prefill and decode run on separate pools (Disaggregation); num_replicas are then
  /// the decode instances, data_parallel_size and pipeline_depth must be 1.
  std::optional<Disaggregation> disaggregation;
};

inline constexpr std::int64_t kProgressEveryRequests = 4096;

enum class RequestStatus : std::uint8_t { kFinished = 0, kRejected = 1 };

/// One row of the per-request table.
struct RequestRecord {
  RequestId id = 0;
  RequestStatus status = RequestStatus::kFinished;
  std::int32_t replica = -1;
  SimTime arrival;
  SimTime first_scheduled;
  SimTime first_token;
  SimTime finish;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cached_prefix_tokens = 0;
  std::int32_t num_preemptions = 0;
  std::int64_t trace_line = 0;
};

/// One row of the time series: a replica's state when a step starts.
struct TimeSample {
  SimTime time;
  std::int32_t replica = 0;
  std::int64_t num_running = 0;
  std::int64_t num_waiting = 0;  // waiting and swapped out
  std::int64_t kv_used_blocks = 0;
  std::int64_t batch_tokens = 0;
  std::int64_t batch_decodes = 0;
  Duration step_latency;
};

class ServingObserver {
 public:
  virtual ~ServingObserver();
  virtual void on_request(const RequestRecord& record) = 0;
  virtual void on_sample(const TimeSample& sample) = 0;
};

/// What a disaggregated run adds (Disaggregation). Utilisation: the summed step time of a
/// pool's instances over (instances * the run's span), the share of time they computed.
struct DisaggregatedStats {
  std::int32_t num_prefill_instances = 0;
  std::int32_t num_decode_instances = 0;
  LatencyHistogram transfer;      // prefill done -> KV on the decode instance (all waits + link)
  /// Prefill done -> the decode instance's blocks reserved: its next scheduling point, and
  /// any wait for a seat (max_num_seqs), for the queue ahead or for blocks (Disaggregation).
  LatencyHistogram reserve_wait;
  /// Hand-overs held back at a scheduling point of their decode instance (seats full, queue
  /// ahead, or blocks short), each counted once; of those, held back at least once because
  /// its running queue was at max_num_seqs.
  std::int64_t num_reserve_waits = 0;
  std::int64_t num_reserve_seat_waits = 0;
  LatencyHistogram prefill_ttft;  // arrival -> the prefill instance's first token
  std::int64_t num_transfers = 0;
  std::int64_t transfer_bytes = 0;  // summed over transfers
  long double prefill_busy_ns = 0.0L;
  long double decode_busy_ns = 0.0L;
  std::int64_t prefill_kv_blocks_per_instance = 0;
  std::int64_t prefill_kv_peak_blocks = 0;  // max over prefill instances
  std::int64_t decode_kv_blocks_per_instance = 0;
  std::int64_t decode_kv_peak_blocks = 0;   // max over decode instances
  std::int64_t prefill_num_steps = 0;
  std::int64_t decode_num_steps = 0;
  std::int64_t prefill_num_preemptions = 0;
  std::int64_t decode_num_preemptions = 0;
};

/// Everything a run reports besides the streamed rows.
struct ServingResult {
  ServingMetrics metrics{SloSpec{}};
  TraceStats trace_stats;
  std::int64_t num_steps = 0;
  /// Multi-LoRA: adapters copied into GPU slots, and distinct adapters summed over steps
  /// (their mean per step: num_lora_adapter_steps / num_steps).
  std::int64_t num_adapter_loads = 0;
  std::int64_t num_lora_adapter_steps = 0;
  std::int64_t num_events = 0;
  std::int64_t kv_blocks_all_replicas = 0;  // summed over the replicas (a disaggregated run: its decode instances)
  std::int64_t kv_peak_blocks = 0;         // max over replicas
  std::int64_t prefix_query_tokens = 0;    // all replicas
  std::int64_t prefix_hit_tokens = 0;
  std::int64_t num_evictions = 0;
  // KV offload tier, all replicas (kv_cache_manager.hpp); zero without one.
  std::int64_t offload_hit_tokens = 0;         // of prefix_hit_tokens, found in host memory
  std::int64_t num_blocks_offload_loaded = 0;  // host to device
  std::int64_t num_blocks_offload_stored = 0;  // device to host
  std::int64_t num_offload_evictions = 0;
  // KV disk tier, all replicas; zero without one (offload_hit_tokens then counts host hits).
  std::int64_t disk_hit_tokens = 0;         // of prefix_hit_tokens, found on disk
  std::int64_t num_blocks_disk_loaded = 0;  // disk to host
  std::int64_t num_blocks_disk_stored = 0;  // host to disk
  std::int64_t num_disk_evictions = 0;
  Duration disk_write_busy = Duration::zero();          // summed over replicas
  Duration disk_write_backlog_peak = Duration::zero();  // max over replicas
  std::int64_t num_preemptions = 0;        // all preemption events (a request may count twice)
  std::int64_t peak_requests_in_flight = 0;
  /// The run ended early (ServingSetup::p99_stop): the p99 of `stopped_on` ("ttft", "tpot",
  /// "e2e") is sure to miss its target; metrics cover the requests finished until then.
  bool stopped_early = false;
  std::string stopped_on;
  /// With a client gate: the time requests waited for a free slot (sent - due), all requests
  /// (vLLM's client_queue_time); empty in open loop.
  LatencyHistogram client_wait;
  /// Set for a disaggregated run (ServingSetup::disaggregation). The fields above then cover
  /// the decode pool (KV, steps, preemptions), and the metrics the client's view.
  std::optional<DisaggregatedStats> disaggregated;

  double duration_s() const;
  /// A pool's utilisation in [0, 1] (DisaggregatedStats); 0 without a disaggregated run.
  double prefill_utilization() const;
  double decode_utilization() const;
  double prefix_hit_rate() const;
  /// Shares of the prompt tokens looked up that were found on the GPU, in the host-memory
  /// offload tier and in the disk tier (they add up to prefix_hit_rate).
  double gpu_prefix_hit_rate() const;
  double offload_prefix_hit_rate() const;
  double disk_prefix_hit_rate() const;
  double kv_mean_utilization() const;       // time-averaged used / total blocks
  double mean_requests_in_system() const;   // time average (Little's L)
  double arrival_rate_per_s() const;        // arrivals / (last arrival - first arrival)
};

/// Replays `trace`. Throws ConfigError for an unknown scheduler or router (naming `scheduler`
/// or `router`), for an arrival past the clock (kMaxArrivalNs), for more requests in the
/// system at once than the limit (ServingSetup::max_requests_in_system), and whatever the trace
/// source throws for bad rows.
ServingResult simulate_serving(TraceSource& trace, const ServingSetup& setup,
                               const ExecutionTimeModel& time_model,
                               const SchedulerRegistry& schedulers, const RouterRegistry& routers,
                               ServingObserver* observer);

}  // namespace vramsim::serving
