#include "sim/serving/serving_simulation.hpp"

#include "sim/core/check.hpp"
#include "sim/core/error.hpp"
#include "sim/core/simulation.hpp"
#include "sim/serving/disaggregated_handover.hpp"
#include "sim/serving/dp_lockstep_group.hpp"
#include "sim/serving/p99_stop_rule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>

namespace vramsim::serving {

ServingObserver::~ServingObserver() = default;

double ServingResult::duration_s() const {
  if (!metrics.started) return 0.0;
  return (metrics.last_finish - metrics.first_arrival).seconds();
}

namespace {
double pool_utilization(const ServingResult& r, long double busy_ns, std::int32_t instances) {
  const double span_ns =
      static_cast<double>((r.metrics.last_advance - r.metrics.first_arrival).nanoseconds());
  if (span_ns <= 0.0 || instances <= 0) return 0.0;
  return std::min(1.0, static_cast<double>(busy_ns) / (span_ns * instances));
}
}  // namespace

double ServingResult::prefill_utilization() const {
  if (!disaggregated) return 0.0;
  return pool_utilization(*this, disaggregated->prefill_busy_ns,
                          disaggregated->num_prefill_instances);
}

double ServingResult::decode_utilization() const {
  if (!disaggregated) return 0.0;
  return pool_utilization(*this, disaggregated->decode_busy_ns,
                          disaggregated->num_decode_instances);
}

double ServingResult::prefix_hit_rate() const {
  if (prefix_query_tokens == 0) return 0.0;
  return static_cast<double>(prefix_hit_tokens) / static_cast<double>(prefix_query_tokens);
}

double ServingResult::gpu_prefix_hit_rate() const {
  if (prefix_query_tokens == 0) return 0.0;
  return static_cast<double>(prefix_hit_tokens - offload_hit_tokens - disk_hit_tokens) /
         static_cast<double>(prefix_query_tokens);
}

double ServingResult::disk_prefix_hit_rate() const {
  if (prefix_query_tokens == 0) return 0.0;
  return static_cast<double>(disk_hit_tokens) / static_cast<double>(prefix_query_tokens);
}

double ServingResult::offload_prefix_hit_rate() const {
  if (prefix_query_tokens == 0) return 0.0;
  return static_cast<double>(offload_hit_tokens) / static_cast<double>(prefix_query_tokens);
}

double ServingResult::kv_mean_utilization() const {
  const double span_ns = static_cast<double>((metrics.last_advance - metrics.first_arrival).nanoseconds());
  if (span_ns <= 0.0 || kv_blocks_all_replicas == 0) return 0.0;
  return static_cast<double>(metrics.kv_used_ns) /
         (span_ns * static_cast<double>(kv_blocks_all_replicas));
}

double ServingResult::mean_requests_in_system() const {
  const double span_ns = static_cast<double>((metrics.last_advance - metrics.first_arrival).nanoseconds());
  if (span_ns <= 0.0) return 0.0;
  return static_cast<double>(metrics.in_system_ns) / span_ns;
}

double ServingResult::arrival_rate_per_s() const {
  const double span = (metrics.last_arrival - metrics.first_arrival).seconds();
  if (span <= 0.0) return 0.0;
  return static_cast<double>(metrics.num_arrived - 1) / span;
}

namespace {

// kArrival: the pending trace record is due; kClientFree: a client's think time is over.
// kGroupStepDone / kGroupTryLaunch: a lock-stepped DP group's (`replica` is the group index).
enum class EventKind : std::uint8_t {
  kArrival,
  kStepDone,
  kTryLaunch,
  kClientFree,
  kGroupStepDone,
  kGroupTryLaunch,
  kTransferDone  // disaggregated: `request`'s KV reached decode instance `replica`
};

struct Event {
  EventKind kind = EventKind::kArrival;
  std::int32_t replica = 0;
  std::int32_t slot = 0;
  Request* request = nullptr;
  SimTime lands{};  // kTransferDone: when the KV landed (at or before the event's time)
};

class Driver {
 public:
  Driver(TraceSource& trace, const ServingSetup& setup, const ExecutionTimeModel& time_model,
         const SchedulerRegistry& schedulers, const RouterRegistry& routers,
         ServingObserver* observer)
      : trace_(trace), setup_(setup), observer_(observer),
        sim_(setup.seed) {
    VRAMSIM_CHECK(setup.num_replicas >= 1, "{} replicas", setup.num_replicas);
    const SchedulerDescriptor& sched = schedulers.find(setup.scheduler, "scheduler");
    const RouterDescriptor& route = routers.find(setup.router, "router");
    router_ = route.make();
    VRAMSIM_CHECK(setup.data_parallel_size >= 1, "data parallel size {}",
                  setup.data_parallel_size);
    const auto n = static_cast<std::size_t>(setup.num_replicas) *
                   static_cast<std::size_t>(setup.data_parallel_size);
    for (std::size_t i = 0; i < n; ++i) {
      replicas_.push_back(std::make_unique<Replica>(static_cast<std::int32_t>(i), setup.replica,
                                                    sched.make(setup.replica.limits), time_model));
    }
    if (setup.dp_lockstep && setup.data_parallel_size > 1) {
      VRAMSIM_CHECK(setup.replica.pipeline_depth == 1,
                    "a lock-stepped DP group with pipeline depth {}",
                    setup.replica.pipeline_depth);
      std::vector<Replica*> ranks;
      for (const auto& rep : replicas_) ranks.push_back(rep.get());
      lockstep_ = std::make_unique<DpLockstepGroups>(
          std::move(ranks), static_cast<std::size_t>(setup.data_parallel_size),
          setup.dp_pad_to_largest, time_model);
    }
    num_decode_ = n;
    std::size_t total = n;
    if (setup.disaggregation) {
      // Decode instances are replicas [0, n), prefill instances [n, n + num_prefill).
      const Disaggregation& d = *setup.disaggregation;
      VRAMSIM_CHECK(d.num_prefill >= 1 && d.prefill_time_model != nullptr,
                    "disaggregation with {} prefill instances", d.num_prefill);
      VRAMSIM_CHECK(setup.data_parallel_size == 1 && setup.replica.pipeline_depth == 1 &&
                        d.prefill.pipeline_depth == 1,
                    "disaggregation needs data parallel size and pipeline depth 1");
      for (std::int32_t i = 0; i < d.num_prefill; ++i) {
        replicas_.push_back(std::make_unique<Replica>(
            static_cast<std::int32_t>(n) + i, d.prefill, sched.make(d.prefill.limits),
            *d.prefill_time_model));
      }
      total += static_cast<std::size_t>(d.num_prefill);
      busy_ns_.assign(total, 0.0L);
      DisaggregatedStats& st = result_.disaggregated.emplace();
      st.num_prefill_instances = d.num_prefill;
      st.num_decode_instances = static_cast<std::int32_t>(n);
      st.prefill_kv_blocks_per_instance = d.prefill.kv.num_blocks;
      st.decode_kv_blocks_per_instance = setup.replica.kv.num_blocks;
      std::vector<Replica*> decode;
      for (std::size_t i = 0; i < n; ++i) decode.push_back(replicas_[i].get());
      handover_ = std::make_unique<DisaggregatedHandover>(d, std::move(decode), route.make(), st);
      for (std::size_t i = 0; i < n; ++i) {
        replicas_[i]->set_remote_kv_hook([this, i](RemoteKvGate gate, SimTime scheduled) {
          reserve_at_schedule(i, gate, scheduled);
        });
      }
    }
    launch_pending_.assign(total, false);
    next_entry_.assign(total, SimTime::zero());
    next_sample_.assign(total, SimTime::zero());
    views_.resize(n);
    prefill_views_.resize(total - n);
    result_.metrics = ServingMetrics(setup.slo);
    result_.kv_blocks_all_replicas =
        setup.replica.kv.num_blocks * static_cast<std::int64_t>(n);
    needs_hashes_ = setup.replica.kv.enable_prefix_caching || route.uses_prefix_hashes ||
                    (setup.disaggregation && setup.disaggregation->prefill.kv.enable_prefix_caching);
    VRAMSIM_CHECK(setup.clients.max_concurrency >= 0, "max_concurrency {}",
                  setup.clients.max_concurrency);
    VRAMSIM_CHECK(setup.clients.closed() || !setup.clients.send_all_at_start,
                  "send_all_at_start without max_concurrency would send every request at once");
    gated_ = setup.clients.closed();
    free_clients_ = setup.clients.max_concurrency;
    VRAMSIM_CHECK(setup.max_requests_in_system >= 1, "max_requests_in_system {}",
                  setup.max_requests_in_system);
    max_in_system_ = setup.max_requests_in_system;
    if (setup.p99_stop) p99_stop_.emplace(*setup.p99_stop);
  }

  ServingResult run() {
    pull_next_arrival();
    std::vector<Request*> finished;
    while (!sim_.queue().empty() && !result_.stopped_early) {
      const auto e = sim_.step();
      const SimTime now = sim_.now();
      // Every decode replica's KV use is summed only when time has moved.
      if (result_.metrics.advances_at(now)) {
        result_.metrics.advance(now, in_system_, kv_used_total());
      }
      switch (e.payload.kind) {
        case EventKind::kArrival:
          if (gated_) {
            on_due(now);
          } else {
            on_arrival(now);
          }
          break;
        case EventKind::kClientFree: free_client(now); break;
        case EventKind::kStepDone: {
          const auto i = static_cast<std::size_t>(e.payload.replica);
          Replica& rep = *replicas_[i];
          finished.clear();
          if (i < num_decode_) {
            rep.complete(e.payload.slot, now, result_.metrics, finished);
            for (Request* r : finished) retire(*r);
          } else {
            rep.complete(e.payload.slot, now, prefill_metrics_, finished);
            for (Request* r : finished) prefill_finished(*r, now);
          }
          launch_after_step(e.payload.replica, now);
          break;
        }
        case EventKind::kTransferDone: {
          // The KV of the request's prompt is on decode instance `replica`, in the blocks it
          // reserved: the instance's next poll of its connector reports it (KvPoll).
          const auto dec = static_cast<std::size_t>(e.payload.replica);
          handover_->transfer_done({dec, e.payload.request, e.payload.lands}, now);
          request_launch(e.payload.replica);
          break;
        }
        case EventKind::kTryLaunch: try_launch(e.payload.replica, now); break;
        case EventKind::kGroupStepDone: complete_group(e.payload.replica, now, finished); break;
        case EventKind::kGroupTryLaunch: try_launch_group(e.payload.replica, now); break;
      }
    }
    VRAMSIM_CHECK(in_system_ == 0 || result_.stopped_early, "{} requests never finished",
                  in_system_);
    result_.metrics.flush_itl();
    if (result_.disaggregated) {
      DisaggregatedStats& st = *result_.disaggregated;
      for (std::size_t i = 0; i < replicas_.size(); ++i) {
        const Replica& rep = *replicas_[i];
        if (i < num_decode_) {
          st.decode_busy_ns += busy_ns_[i];
          st.decode_num_steps += rep.num_steps();
          st.decode_num_preemptions += rep.num_preemptions();
          st.decode_kv_peak_blocks =
              std::max(st.decode_kv_peak_blocks, rep.kv().stats().peak_used_blocks);
        } else {
          st.prefill_busy_ns += busy_ns_[i];
          st.prefill_num_steps += rep.num_steps();
          st.prefill_num_preemptions += rep.num_preemptions();
          st.prefill_kv_peak_blocks =
              std::max(st.prefill_kv_peak_blocks, rep.kv().stats().peak_used_blocks);
        }
      }
    }
    for (std::size_t i = 0; i < num_decode_; ++i) {
      const auto& rep = replicas_[i];
      const KvCacheStats& s = rep->kv().stats();
      result_.kv_peak_blocks = std::max(result_.kv_peak_blocks, s.peak_used_blocks);
      result_.prefix_query_tokens += s.prefix_query_tokens;
      result_.prefix_hit_tokens += s.prefix_hit_tokens;
      result_.num_evictions += s.num_evictions;
      result_.offload_hit_tokens += s.offload_hit_tokens;
      result_.num_blocks_offload_loaded += s.num_blocks_offload_loaded;
      result_.num_blocks_offload_stored += s.num_blocks_offload_stored;
      result_.num_offload_evictions += s.num_offload_evictions;
      result_.disk_hit_tokens += s.disk_hit_tokens;
      result_.num_blocks_disk_loaded += s.num_blocks_disk_loaded;
      result_.num_blocks_disk_stored += s.num_blocks_disk_stored;
      result_.num_disk_evictions += s.num_disk_evictions;
      result_.disk_write_busy += rep->disk_write_busy();
      result_.disk_write_backlog_peak =
          std::max(result_.disk_write_backlog_peak, rep->disk_write_backlog_peak());
      result_.num_steps += rep->num_steps();
      result_.num_adapter_loads += rep->num_adapter_loads();
      result_.num_lora_adapter_steps += rep->sum_step_adapters();
      result_.num_preemptions += rep->num_preemptions();
    }
    result_.trace_stats = trace_.stats();
    result_.num_events = static_cast<std::int64_t>(sim_.num_processed());
    return std::move(result_);
  }

 private:
  void pull_next_arrival() {
    auto record = trace_.next();
    if (!record) {
      trace_done_ = true;
      return;
    }
    if (record->arrival.nanoseconds() > kMaxArrivalNs) {
      // A source's own checks name the setting (--rate, --time-scale); this one catches a
      // trace whose timestamps themselves pass the clock.
      const std::string which = record->line > 0 ? fmt::format("line {}", record->line)
                                                 : fmt::format("request {}", next_id_ + 1);
      throw ConfigError("trace",
                        fmt::format("{}: {} arrives at {:.3g} s: past the simulator's clock "
                                    "({:g} s of arrivals); use --window-start / --window-end or "
                                    "--time-scale to bring it into range",
                                    trace_.describe(), which,
                                    static_cast<double>(record->arrival.nanoseconds()) * 1e-9,
                                    kMaxArrivalSeconds));
    }
    if (gated_) {
      // The gate is FIFO, so a record is pulled only once the one before it was sent: it may
      // have been due earlier (it waited behind that one), and then it reaches the gate now.
      pending_ = std::move(*record);
      pending_due_ = setup_.clients.send_all_at_start ? SimTime::zero() : pending_.arrival;
      sim_.schedule_at(std::max(pending_due_, sim_.now()), Phase::kArrival,
                       Event{EventKind::kArrival, 0, 0});
      return;
    }
    VRAMSIM_CHECK(record->arrival >= sim_.now(), "trace went back in time at line {}",
                  record->line);
    pending_ = std::move(*record);
    sim_.schedule_at(pending_.arrival, Phase::kArrival, Event{EventKind::kArrival, 0, 0});
  }

  // The pending record is due: sent if a client slot is free, else it waits at the gate (and
  // the trace is not read further until it is sent).
  void on_due(SimTime now) {
    if (free_clients_ == 0) {
      gate_blocked_ = true;
      return;
    }
    send_pending(now);
  }

  void send_pending(SimTime now) {
    --free_clients_;
    result_.client_wait.add(now - pending_due_);
    on_arrival(now);
  }

  // A request let go of its client slot at `now` (finished or rejected).
  void release_client(SimTime now) {
    if (setup_.clients.think_time == Duration::zero()) {
      free_client(now);
    } else if (!trace_done_) {  // with nothing left to send, no client needs waking
      sim_.schedule_at(now + setup_.clients.think_time, Phase::kArrival,
                       Event{EventKind::kClientFree, 0, 0});
    }
  }

  void free_client(SimTime now) {
    ++free_clients_;
    VRAMSIM_CHECK(free_clients_ <= setup_.clients.max_concurrency, "{} free client slots of {}",
                  free_clients_, setup_.clients.max_concurrency);
    if (gate_blocked_) {
      gate_blocked_ = false;
      send_pending(now);
    }
  }

  void on_arrival(SimTime now) {
    Request& r = allocate_request();
    r.id = next_id_++;
    r.uid = stable_mix(setup_.seed, static_cast<std::uint64_t>(r.id));
    r.arrival = now;
    r.prompt_tokens = pending_.prompt_tokens;
    r.output_tokens = pending_.output_tokens;
    r.trace_line = pending_.line;
    r.adapter = pending_.adapter;
    if (r.adapter != 0 && setup_.replica.limits.max_loras == 0) {
      throw ConfigError("workload.trace",
                        fmt::format("the request of trace line {} names LoRA adapter {} but LoRA "
                                    "is off: give --enable-lora (engine.enable_lora)",
                                    pending_.line, r.adapter));
    }
    if (needs_hashes_) r.prefix_hashes = prefix_block_hashes(pending_, setup_.replica.kv.block_size);
    result_.metrics.on_arrival(r);
    pull_next_arrival();

    // The most KV a request ever holds: every token but the last generated one.
    const std::int64_t tokens = r.prompt_tokens + r.output_tokens;
    const std::int64_t blocks = ceil_div(tokens - 1, setup_.replica.kv.block_size);
    // A disaggregated request's prefill instance holds its prompt's KV.
    const bool prefill_too_big =
        setup_.disaggregation &&
        ceil_div(r.prompt_tokens, setup_.disaggregation->prefill.kv.block_size) >
            setup_.disaggregation->prefill.kv.num_blocks;
    // Under vLLM V0's watermark (SchedulerLimits::watermark_blocks; 0 in V1) a sequence
    // whose blocks exceed num_blocks - watermark_blocks can never be admitted (V0 ignores it).
    // NOTE: V0 tests the sequence at each admission, so it would serve such a request until
    // a recompute preemption; it is rejected here up front, so that it never blocks the queue.
    const std::int64_t admissible_blocks =
        setup_.replica.kv.num_blocks - setup_.replica.limits.watermark_blocks;
    if ((setup_.max_model_len > 0 && tokens > setup_.max_model_len) ||
        blocks > admissible_blocks || prefill_too_big) {
      result_.metrics.on_reject();
      if (observer_ != nullptr) observer_->on_request(make_record(r, RequestStatus::kRejected));
      release_request(r);
      if (gated_) release_client(now);  // vLLM's client gets its error and moves on
      return;
    }
    std::size_t pick = 0;
    if (setup_.disaggregation) {
      // The prefill instance runs the prompt and one token (the proxy's max_tokens = 1).
      for (std::size_t i = 0; i < prefill_views_.size(); ++i) {
        prefill_views_[i] = replicas_[num_decode_ + i]->view();
        prefill_views_[i].index = static_cast<std::int32_t>(i);
      }
      const std::size_t p = router_->route(r, prefill_views_);
      VRAMSIM_CHECK(p < prefill_views_.size(), "router picked prefill instance {} of {}", p,
                    prefill_views_.size());
      pick = num_decode_ + p;
      r.pd_output_tokens = r.output_tokens;
      r.output_tokens = 1;
    } else {
      for (std::size_t i = 0; i < num_decode_; ++i) views_[i] = replicas_[i]->view();
      pick = router_->route(r, views_);
      VRAMSIM_CHECK(pick < num_decode_, "router picked replica {} of {}", pick, num_decode_);
    }
    if (in_system_ >= max_in_system_) {
      throw ConfigError(
          "serving.max_requests_in_system",
          fmt::format("{} requests are in the system at once at t = {:.6g} s (arrived, not "
                      "finished): more than the simulator holds in memory ({}; "
                      "--max-requests-in-system, or serving.max_requests_in_system in the "
                      "scenario, raises it, at about 180 bytes each); the arrivals outpace "
                      "the replicas: lower --rate or --num-requests, or cap them with "
                      "--max-concurrency",
                      in_system_ + 1, now.seconds(), max_in_system_));
    }
    replicas_[pick]->enqueue(r);
    ++in_system_;
    result_.peak_requests_in_flight = std::max(result_.peak_requests_in_flight, in_system_);
    request_launch(static_cast<std::int32_t>(pick));
  }

  void request_launch(std::int32_t replica) {
    if (lockstep_) {
      request_group_launch(lockstep_->group_of(replica));
      return;
    }
    const auto i = static_cast<std::size_t>(replica);
    if (launch_pending_[i]) return;
    launch_pending_[i] = true;
    const SimTime at = std::max(sim_.now(), next_entry_[i]);
    sim_.schedule_at(at, Phase::kSchedule, Event{EventKind::kTryLaunch, replica, 0});
  }

  // The next launch of a replica whose step just completed. NOTE: when no other event is due
  // at `now` (and the run goes on), the kTryLaunch event request_launch would schedule at `now`
  // is the very next one popped, so the launch is tried at once: one event per step instead of
  // two, in the same order, with the same results.
  void launch_after_step(std::int32_t replica, SimTime now) {
    const auto i = static_cast<std::size_t>(replica);
    if (!lockstep_ && !result_.stopped_early && !launch_pending_[i] &&
        next_entry_[i] <= now && (sim_.queue().empty() || now < sim_.queue().top().key.time)) {
      try_launch(replica, now);
      return;
    }
    request_launch(replica);
  }

  void try_launch(std::int32_t replica, SimTime now) {
    const auto i = static_cast<std::size_t>(replica);
    launch_pending_[i] = false;
    Replica& rep = *replicas_[i];
    if (now < next_entry_[i]) return;
    const bool pd_decode = handover_ != nullptr && i < num_decode_;
    if (!rep.can_launch()) {
      // An idle disaggregated decode instance with nothing to run: vLLM's engine loop still
      // calls schedule() while requests wait for their remote KV, and with no request running
      // or waiting there its waiting loop reaches them.
      if (pd_decode && rep.num_in_flight() == 0) {
        VRAMSIM_CHECK(rep.num_running() == 0, "idle decode instance {} with {} running", i,
                      rep.num_running());
        reserve_at_schedule(i, RemoteKvGate::kOpen, now);
      }
      return;
    }
    // A disaggregated decode instance reserves blocks for the requests handed to it within
    // each schedule() call, after its running and waiting requests (RemoteKvGate), through
    // its remote KV hook; with async scheduling that call may have run at the last step's
    // start (Replica::RemoteKvHook).
    const auto launch = rep.launch(now);
    if (!launch) {
      // A disaggregated decode instance: the KV on its way (its blocks reserved) will let the
      // queue move.
      const bool inbound = pd_decode && handover_->has_inbound(i);
      VRAMSIM_CHECK(rep.num_in_flight() > 0 || rep.num_unfinished() == 0 || inbound,
                    "replica {} is stuck: {} requests wait but none can be scheduled", replica,
                    rep.num_unfinished());
      // After the check: a closed-loop client may send its next request as one retires.
      retire_released(i, now);
      return;
    }
    sample(i, *launch, now);
    sim_.schedule_after(launch->latency, Phase::kCompletion,
                        Event{EventKind::kStepDone, replica, launch->slot});
    if (!busy_ns_.empty()) busy_ns_[i] += static_cast<long double>(launch->latency.nanoseconds());
    next_entry_[i] = now + launch->interval;
    // With pipeline parallelism another batch may enter before this one completes.
    if (setup_.replica.pipeline_depth > 1) request_launch(replica);
    retire_released(i, now);
  }

  // Async scheduling: the requests replica `i`'s last plan released (Replica::take_released),
  // at `now`; a prefill instance's go to the decode pool.
  void retire_released(std::size_t i, SimTime now) {
    released_.clear();
    replicas_[i]->take_released(released_);
    for (Request* r : released_) {
      if (i < num_decode_) {
        retire(*r);
      } else {
        prefill_finished(*r, now);
      }
    }
  }

  // Disaggregated: `r` finished its prefill (and first token) at `now` and its prefill
  // instance has released it (vLLM's update_from_output returns its output, with the KV
  // transfer parameters, to the proxy then, with or without async scheduling). Its decode
  // instance takes it up at its next schedule() call: at its running step's end
  // (launch_after_step), or now when it is idle.
  void prefill_finished(Request& r, SimTime now) {
    const std::size_t dec = handover_->prefill_done(r, now);
    if (replicas_[dec]->num_in_flight() == 0) request_launch(static_cast<std::int32_t>(dec));
  }

  // A replica's state as its step starts, every timeseries_interval at most.
  void sample(std::size_t i, const Launch& l, SimTime now) {
    if (observer_ == nullptr || now < next_sample_[i]) return;
    const Replica& rep = *replicas_[i];
    observer_->on_sample({now, static_cast<std::int32_t>(i), rep.num_running(),
                          rep.num_waiting(), rep.kv().num_used_blocks(), l.num_tokens,
                          l.num_decodes, l.latency});
    next_sample_[i] = now + setup_.timeseries_interval;
  }

  // A lock-stepped DP group (DpLockstepGroups): one step of the group at a time.
  void request_group_launch(std::int32_t group) {
    if (!lockstep_->request_launch(static_cast<std::size_t>(group))) return;
    sim_.schedule_at(sim_.now(), Phase::kSchedule, Event{EventKind::kGroupTryLaunch, group, 0});
  }

  void try_launch_group(std::int32_t group, SimTime now) {
    const auto g = static_cast<std::size_t>(group);
    const GroupLaunch launch = lockstep_->try_launch(
        g, now, [&](std::size_t i, const Launch& l) { sample(i, l, now); });
    switch (launch.outcome) {
      case GroupLaunchOutcome::kNoneReady: return;
      case GroupLaunchOutcome::kNonePlanned: break;
      case GroupLaunchOutcome::kStarted:
        sim_.schedule_after(launch.latency, Phase::kCompletion,
                            Event{EventKind::kGroupStepDone, group, 0});
        break;
    }
    // Started or not, the ranks' plans may have released requests (async scheduling).
    for (Replica* rep : lockstep_->ranks(g)) {
      retire_released(static_cast<std::size_t>(rep->index()), now);
    }
  }

  void complete_group(std::int32_t group, SimTime now, std::vector<Request*>& finished) {
    lockstep_->complete(static_cast<std::size_t>(group), now, result_.metrics, finished,
                        [this](Request& r) { retire(r); });
    request_group_launch(group);
  }

  // Disaggregated: decode instance `dec` runs schedule() at `now`; the requests handed to it
  // may reserve their blocks (DisaggregatedHandover::reserve_at_schedule).
  // `scheduled`: when vLLM ran that call (at or before now: Replica::RemoteKvHook).
  void reserve_at_schedule(std::size_t dec, RemoteKvGate gate, SimTime scheduled) {
    if (!handover_->has_waiting(dec)) return;
    transfers_.clear();
    handover_->reserve_at_schedule(dec, gate, scheduled, transfers_);
    // Each transfer's landing, in the order started. One started at an async plan's earlier
    // schedule point may have landed already: the decode instance has it at once (its next
    // poll reports it).
    const SimTime now = sim_.now();
    for (const KvTransfer& t : transfers_) {
      if (t.lands <= now) {
        handover_->transfer_done(t, now);
        continue;
      }
      sim_.schedule_at(t.lands, Phase::kCompletion,
                       Event{EventKind::kTransferDone, static_cast<std::int32_t>(t.decode), 0,
                             t.request, t.lands});
    }
  }

  void retire(Request& r) {
    result_.metrics.on_finish(r);
    if (p99_stop_) {
      // The P99Stop rule (serving_simulation.hpp), applied as `r` finishes.
      const auto created = static_cast<std::int64_t>(next_id_);
      if (const char* on = p99_stop_->on_finish(r, trace_done_, created)) {
        result_.stopped_early = true;
        result_.stopped_on = on;
      }
    }
    --in_system_;
    if (observer_ != nullptr) observer_->on_request(make_record(r, RequestStatus::kFinished));
    if (setup_.progress && ++num_retired_ % kProgressEveryRequests == 0) {
      setup_.progress(num_retired_, r.finish);
    }
    const SimTime finish = r.finish;
    release_request(r);
    if (gated_) release_client(finish);
  }

  // A rejected request was never placed: its replica is -1 and its times are zero.
  static RequestRecord make_record(const Request& r, RequestStatus status) {
    RequestRecord rec;
    rec.id = r.id;
    rec.status = status;
    rec.replica = r.replica;
    rec.arrival = r.arrival;
    rec.first_scheduled = r.first_scheduled;
    rec.first_token = r.first_token;
    rec.finish = r.finish;
    rec.prompt_tokens = r.prompt_tokens;
    rec.output_tokens = r.output_tokens;
    rec.cached_prefix_tokens = r.num_cached_prefix_tokens;
    rec.num_preemptions = r.num_preemptions;
    rec.trace_line = r.trace_line;
    return rec;
  }

  // The decode instances' (every replica's when not disaggregated).
  std::int64_t kv_used_total() const {
    std::int64_t used = 0;
    for (std::size_t i = 0; i < num_decode_; ++i) used += replicas_[i]->kv().num_used_blocks();
    return used;
  }

  Request& allocate_request() {
    if (free_.empty()) {
      pool_.push_back(std::make_unique<Request>());
      return *pool_.back();
    }
    Request* r = free_.back();
    free_.pop_back();
    return *r;
  }

  void release_request(Request& r) {
    std::vector<BlockHash> hashes = std::move(r.prefix_hashes);
    hashes.clear();
    r = Request{};
    r.prefix_hashes = std::move(hashes);  // keep the capacity for the next request
    free_.push_back(&r);
  }

  static std::uint64_t stable_mix(std::uint64_t seed, std::uint64_t id) {
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ULL + id;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }

  TraceSource& trace_;
  const ServingSetup& setup_;
  ServingObserver* observer_;
  std::int64_t num_retired_ = 0;  // for ServingSetup::progress
  Simulation<Event> sim_;
  std::unique_ptr<Router> router_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<bool> launch_pending_;
  std::unique_ptr<DpLockstepGroups> lockstep_;  // ServingSetup::dp_lockstep; null: step alone
  std::vector<SimTime> next_entry_;
  std::vector<SimTime> next_sample_;
  std::vector<ReplicaView> views_;          // decode instances (every replica)
  // Disaggregated (Disaggregation): replicas_[num_decode_..] are the prefill instances.
  std::size_t num_decode_ = 0;
  std::vector<ReplicaView> prefill_views_;
  std::unique_ptr<DisaggregatedHandover> handover_;  // prefill done -> KV on a decode instance
  std::vector<KvTransfer> transfers_;       // scratch: the transfers a hand-over call started
  std::vector<long double> busy_ns_;        // per replica: summed step latencies
  ServingMetrics prefill_metrics_{SloSpec{}};  // the prefill instances' tokens (not reported)
  std::vector<std::unique_ptr<Request>> pool_;
  std::vector<Request*> free_;
  std::vector<Request*> released_;  // scratch: async scheduling's released requests
  TraceRecord pending_;
  SimTime pending_due_;          // gated: when pending_ came (or comes) due
  bool gated_ = false;           // a client gate (ClientLoop::closed)
  bool gate_blocked_ = false;    // pending_ is due and waits for a free slot
  bool trace_done_ = false;      // the trace has no more records
  std::int32_t free_clients_ = 0;
  RequestId next_id_ = 0;
  std::int64_t in_system_ = 0;
  std::int64_t max_in_system_ = 0;
  bool needs_hashes_ = false;
  std::optional<P99StopRule> p99_stop_;  // ServingSetup::p99_stop
  ServingResult result_;
};

}  // namespace

ServingResult simulate_serving(TraceSource& trace, const ServingSetup& setup,
                               const ExecutionTimeModel& time_model,
                               const SchedulerRegistry& schedulers, const RouterRegistry& routers,
                               ServingObserver* observer) {
  Driver driver(trace, setup, time_model, schedulers, routers, observer);
  return driver.run();
}

}  // namespace vramsim::serving
