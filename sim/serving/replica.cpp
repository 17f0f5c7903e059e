#include "sim/serving/replica.hpp"

#include "sim/core/check.hpp"
#include "sim/serving/serving_metrics.hpp"

#include <algorithm>
#include <cmath>

namespace vramsim::serving {
namespace {

// Work left in a request, in tokens to compute: prompt + output - 1 (the last generated token's
// KV is never computed) minus what is already computed.
// Tokens still to compute: a request enqueued with KV already computed (a disaggregated decode
// instance receives the prompt's) brings num_computed_tokens > 0.
std::int64_t total_work(const Request& r) {
  return r.prompt_tokens + r.output_tokens - 1 - r.num_computed_tokens;
}

}  // namespace

Replica::Replica(std::int32_t index, const ReplicaConfig& config,
                 std::unique_ptr<BatchScheduler> scheduler, const ExecutionTimeModel& time_model)
    : index_(index),
      config_(config),
      scheduler_(std::move(scheduler)),
      time_model_(time_model),
      kv_(config.kv) {
  VRAMSIM_CHECK(config.pipeline_depth >= 1, "pipeline depth {}", config.pipeline_depth);
  VRAMSIM_CHECK(config.num_speculative_tokens == config.limits.num_lookahead_tokens,
                "{} speculative tokens but {} lookahead slots", config.num_speculative_tokens,
                config.limits.num_lookahead_tokens);
  VRAMSIM_CHECK(config.num_speculative_tokens == 0 ||
                    (config.expected_tokens_per_step >= 1.0 &&
                     config.expected_tokens_per_step <=
                         static_cast<double>(config.num_speculative_tokens + 1)),
                "expected tokens per step {} outside [1, k + 1]", config.expected_tokens_per_step);
  const bool host_copies = config.kv.num_host_blocks > 0 || config.kv.num_offload_blocks > 0 ||
                           config.streamed_weights > Bytes(0) || config.limits.max_loras > 0;
  VRAMSIM_CHECK(!host_copies || (config.host_to_device > Bandwidth() &&
                                 config.device_to_host > Bandwidth()),
                "replica {}: host copies (swap, KV offload, streamed weights or LoRA) need "
                "positive host_to_device and device_to_host rates", index);
  slots_.resize(static_cast<std::size_t>(config.pipeline_depth));
  slot_poll_.assign(static_cast<std::size_t>(config.pipeline_depth), SimTime::zero());
  for (int s = config.pipeline_depth - 1; s >= 0; --s) free_slots_.push_back(s);
}

void Replica::enqueue(Request& r) {
  r.replica = index_;
  r.state = RequestState::kWaiting;
  // Async scheduling: the scheduler sees it from the first plan made after it arrived.
  if (config_.async_scheduling) {
    arrived_.push_back(&r);
  } else {
    queues_.waiting.push_back(&r);
  }
  ++num_unfinished_;
  outstanding_tokens_ += total_work(r);
}

bool Replica::reserve_remote_kv(const Request& r) {
  VRAMSIM_CHECK(r.num_computed_tokens == r.prompt_tokens - 1 && kv_.num_blocks_of(r.id) == 0,
                "request {}: a remote KV reservation with {} of {} prompt tokens computed", r.id,
                r.num_computed_tokens, r.prompt_tokens);
  // The blocks of the whole prompt: the computed tokens and the last one, recomputed here.
  return kv_.allocate_slots(r, 1, 0, config_.limits.reserve_full_isl ? r.num_tokens() : 0);
}

void Replica::kv_landed(Request& r, SimTime landed) {
  r.replica = index_;
  r.state = RequestState::kWaiting;
  landed_.emplace_back(&r, landed);
  ++num_unfinished_;
  outstanding_tokens_ += total_work(r);
}

bool Replica::can_launch() const {
  if (free_slots_.empty()) return false;
  if (!queues_.waiting.empty() || !queues_.swapped.empty() || !arrived_.empty() ||
      !finishing_.empty() || !landed_.empty() || !kv_reported_.empty()) {
    return true;
  }
  // Some running request outside the batches in flight.
  return std::any_of(queues_.running.begin(), queues_.running.end(),
                     [](const Request* r) { return !r->in_flight; });
}

std::optional<Launch> Replica::launch(SimTime now) {
  const BatchShape* shape = plan(now);
  if (shape == nullptr) return std::nullopt;
  return start(now, time_model_.step_time(*shape));
}

const BatchShape* Replica::plan(SimTime now) {
  VRAMSIM_CHECK(planned_slot_ < 0, "replica {}: planned twice without starting", index_);
  if (free_slots_.empty()) return nullptr;
  const int slot = free_slots_.back();
  StepPlan& plan = slots_[static_cast<std::size_t>(slot)];
  plan.clear();
  SchedulerContext ctx(queues_, kv_, config_.limits, plan);
  // Async scheduling (replica.hpp): a step that follows the last one back to back was planned
  // by vLLM when the last one started (EngineCore.step_with_batch_queue schedules step N+1
  // before it blocks on step N's output): it sees the arrivals up to then, and the requests
  // that finished in the last step still hold their blocks and seats.
  // With pipeline parallelism the engine plans a batch as soon as the queue of pp batches has
  // room: one that enters while other batches are in flight was planned as the last one was
  // submitted, and its host work overlapped theirs; one planned as a batch completes was
  // planned after that batch's output was processed (its finished requests already released,
  // complete()), with what had arrived by then, and its inputs prepared while that batch ran
  // (the last stage hands the sampled tokens to the first, vLLM PR #32618), as without PP.
  bool lagged = false;
  bool overlapped = false;
  if (config_.async_scheduling && config_.pipeline_depth == 1) {
    lagged = num_steps_ > 0 && last_end_ == now;
    overlapped = lagged;
  } else if (config_.async_scheduling) {
    overlapped = num_steps_ > 0 && (num_in_flight_ > 0 || last_end_ == now);
    lagged = num_in_flight_ > 0 && last_end_ != now;
  }
  schedule_point_ = lagged ? last_start_ : now;
  admit_arrivals(schedule_point_);
  scheduler_->schedule(ctx);
  end_schedule_call(plan);
  if (plan.empty() && (!landed_.empty() || !kv_reported_.empty() ||
                       (lagged && (!arrived_.empty() || !finishing_.empty())))) {
    // vLLM's step had nothing to run: it costs no GPU time, its output reports the KV that
    // has landed (kv_connector_no_forward polls the connector: KvPoll), the last step's output
    // is processed, the new requests are read, and the next schedule() sees them at once.
    release_finishing();
    report_landed(now, now);
    admit_arrivals(now);
    lagged = false;
    schedule_point_ = now;
    scheduler_->schedule(ctx);
    end_schedule_call(plan);
  }
  if (config_.async_scheduling) {
    release_finishing();
    overlap_host_ = config_.pipeline_depth == 1 ? lagged : overlapped;
  }
  num_preemptions_ += plan.num_preempted;
  outstanding_tokens_ += plan.tokens_dropped - plan.tokens_from_cache;
  if (plan.empty()) {
    VRAMSIM_CHECK(plan.swap_out == Bytes(0) && plan.swap_in == Bytes(0),
                  "an empty step moved swap data");
    return nullptr;
  }
  planned_slot_ = slot;
  return &plan.shape;
}

void Replica::end_schedule_call(const StepPlan& plan) {
  // The budget this plan took: a decode under speculation takes 1 + k (SchedulerContext::
  // budget_tokens).
  const std::int64_t budget_used =
      plan.shape.num_tokens() + plan.shape.num_decodes * config_.limits.num_lookahead_tokens;
  if (static_cast<std::int64_t>(queues_.running.size()) >= config_.limits.max_num_seqs) {
    remote_kv_gate_ = RemoteKvGate::kSeatsFull;
  } else if (plan.num_preempted > 0 || !queues_.waiting.empty() || !queues_.swapped.empty() ||
             budget_used >= config_.limits.max_num_batched_tokens) {
    remote_kv_gate_ = RemoteKvGate::kQueueAhead;
  } else {
    remote_kv_gate_ = RemoteKvGate::kOpen;
  }
  if (remote_kv_hook_) remote_kv_hook_(remote_kv_gate_, schedule_point_);
}

Launch Replica::start(SimTime now, const StepTime& t) {
  VRAMSIM_CHECK(planned_slot_ >= 0 && planned_slot_ == free_slots_.back(),
                "replica {}: start() without plan()", index_);
  const int slot = planned_slot_;
  planned_slot_ = -1;
  StepPlan& plan = slots_[static_cast<std::size_t>(slot)];
  free_slots_.pop_back();
  ++num_in_flight_;
  ++num_steps_;
  // KvPoll: the worker polls once the host has prepared the step and launched its forward,
  // StepTime::overhead after the schedule point (under async scheduling that host time ran
  // from the previous step's start, the schedule point then).
  slot_poll_[static_cast<std::size_t>(slot)] = schedule_point_ + t.overhead;
  last_start_ = now;
  for (const ScheduledItem& item : plan.items) {
    if (!item.request->first_scheduled_set) {
      item.request->first_scheduled_set = true;
      item.request->first_scheduled = now;
    }
    item.request->in_flight = true;
  }
  // Swap copies before the step: out to host memory, then in from it.
  Duration swap = Duration::zero();
  if (plan.swap_out > Bytes(0)) swap += plan.swap_out / config_.device_to_host;
  if (plan.swap_in > Bytes(0)) swap += plan.swap_in / config_.host_to_device;
  const OffloadTraffic traffic = kv_.take_offload_traffic();
  const OffloadCost offload = offload_cost(traffic);
  if (traffic.blocks_disk_written > 0) {
    // Asynchronous writes (see OffloadCost): queued behind earlier ones, off the step's path.
    const Duration write =
        (traffic.blocks_disk_written * config_.disk_bytes_per_block) / config_.disk_write;
    disk_free_at_ = std::max(disk_free_at_, now) + write;
    disk_write_busy_ = disk_write_busy_ + write;
    disk_write_backlog_peak_ = std::max(disk_write_backlog_peak_, disk_free_at_ - now);
  }
  // Offloaded weights cross the host link in every forward step, at the pinned copy rate.
  if (config_.streamed_weights > Bytes(0)) {
    swap += config_.streamed_weights / config_.host_to_device;
  }
  // LoRA: adapters of this step missing from the GPU slots are copied in before it, each
  // replacing the least recently used one outside the step (the scheduler keeps a step's
  // adapters within max_loras, so there always is one).
  // NOTE: vLLM's LRUCacheWorkerLoRAManager copies each missing adapter from its CPU cache
  // into a slot (set_lora) before the forward pass; an adapter missing from the CPU cache
  // too is first read from disk, which is not modelled (its time depends on the storage).
  if (config_.limits.max_loras > 0 && !plan.adapters.empty()) {
    std::int64_t loads = 0;
    for (const std::int32_t adapter : plan.adapters) {
      auto it = std::find_if(lora_slots_.begin(), lora_slots_.end(),
                             [&](const auto& s) { return s.first == adapter; });
      if (it == lora_slots_.end()) {
        ++loads;
        if (static_cast<std::int64_t>(lora_slots_.size()) < config_.limits.max_loras) {
          lora_slots_.emplace_back(adapter, num_steps_);
          continue;
        }
        // The least recently used slot; ties (never, steps are distinct) to the lowest index.
        it = std::min_element(lora_slots_.begin(), lora_slots_.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; });
        VRAMSIM_CHECK(it->second < num_steps_, "replica {}: no LoRA slot to replace", index_);
        it->first = adapter;
      }
      it->second = num_steps_;
    }
    num_adapter_loads_ += loads;
    sum_step_adapters_ += static_cast<std::int64_t>(plan.adapters.size());
    if (loads > 0) swap += (loads * config_.lora_adapter_bytes) / config_.host_to_device;
  }
  // Async scheduling: the host part of a back-to-back step (scheduling, input preparation)
  // ran while the last step was on the GPU (replica.hpp); the step takes the longer of the two.
  Duration compute = t.total;
  Duration interval = t.stage_interval;
  if (overlap_host_) {
    compute = std::max(t.total - t.overhead, t.overhead);
    interval = std::max(t.stage_interval - t.overhead, t.overhead);
    overlap_host_ = false;
  }
  Launch l;
  l.slot = slot;
  // Native stores overlap the step's compute, LMCache's follow it; the loads come before it
  // (see OffloadCost).
  const bool blocking_store = config_.kv.offload_backend == KvOffloadBackend::kLmcache;
  const auto with_store = [&](Duration busy) {
    return blocking_store ? busy + offload.store : std::max(busy, offload.store);
  };
  l.latency = with_store(compute) + swap + offload.load;
  l.interval = with_store(interval) + swap + offload.load;
  l.num_tokens = plan.shape.num_tokens();
  l.num_decodes = plan.shape.num_decodes;
  return l;
}

void Replica::complete(int slot, SimTime now, ServingMetrics& metrics,
                       std::vector<Request*>& finished) {
  StepPlan& plan = slots_[static_cast<std::size_t>(slot)];
  bool any_finished = false;
  for (const ScheduledItem& item : plan.items) {
    Request& r = *item.request;
    r.in_flight = false;
    std::int64_t emitted = 1;
    if (config_.num_speculative_tokens > 0 &&
        SchedulerContext::is_decode(r, item.num_new_tokens)) {
      // Speculation: the expected tokens per step, through the request's fractional credit
      // (speculative.hpp); the accepted drafts' KV is computed by the verification pass.
      r.speculative_credit += config_.expected_tokens_per_step;
      const auto whole = static_cast<std::int64_t>(std::floor(r.speculative_credit));
      r.speculative_credit -= static_cast<double>(whole);
      emitted = std::clamp<std::int64_t>(whole, 1, r.output_tokens - r.num_generated);
      ++metrics.num_speculative_decodes;
      metrics.num_speculative_tokens += emitted;
    }
    const std::int64_t computed = item.num_new_tokens + emitted - 1;
    r.num_computed_tokens += computed;
    outstanding_tokens_ -= computed;
    if (r.num_computed_tokens < r.num_tokens()) continue;  // a prefill chunk, more to come
    r.num_generated += emitted;
    metrics.on_token(r, now, emitted);
    if (r.num_generated < r.output_tokens) continue;
    r.state = RequestState::kFinished;
    r.finish = now;
    if (config_.async_scheduling && config_.pipeline_depth == 1) {
      // Held through the next plan (replica.hpp); in_flight keeps the scheduler off it.
      r.in_flight = true;
      finishing_.push_back(&r);
      continue;
    }
    kv_.free(r);
    --num_unfinished_;
    finished.push_back(&r);
    any_finished = true;
  }
  if (any_finished) {
    std::erase_if(queues_.running, [](const Request* r) { return r->finished(); });
  }
  plan.clear();
  free_slots_.push_back(slot);
  --num_in_flight_;
  last_end_ = now;
  // KvPoll: the step's output reports the KV that landed by its poll.
  if (!landed_.empty()) report_landed(slot_poll_[static_cast<std::size_t>(slot)], now);
  if (config_.check_kv_invariants) {
    kv_.check_invariants();
    VRAMSIM_CHECK(kv_.num_free_blocks() + kv_.num_used_blocks() == kv_.num_blocks(),
                  "replica {}: free + used != total blocks", index_);
  }
}

void Replica::admit_arrivals(SimTime cutoff) {
  while (!arrived_.empty() && arrived_.front()->arrival <= cutoff) {
    queues_.waiting.push_back(arrived_.front());
    arrived_.pop_front();
  }
  // Reported KV, in report order (KvPoll): each behind the waiting requests holding blocks.
  while (!kv_reported_.empty() && kv_reported_.front().second <= cutoff) {
    queues_.wait_behind_kv_holders(*kv_reported_.front().first, kv_);
    kv_reported_.pop_front();
  }
}

void Replica::report_landed(SimTime poll, SimTime known) {
  // In landing order; those landed after the poll wait for a later one.
  std::deque<std::pair<Request*, SimTime>> later;
  for (const auto& [r, landed] : landed_) {
    if (landed <= poll) {
      kv_reported_.emplace_back(r, known);
    } else {
      later.emplace_back(r, landed);
    }
  }
  landed_.swap(later);
}

void Replica::release_finishing() {
  if (finishing_.empty()) return;
  for (Request* r : finishing_) {
    kv_.free(*r);
    r->in_flight = false;
    --num_unfinished_;
    released_.push_back(r);
  }
  finishing_.clear();
  std::erase_if(queues_.running, [](const Request* r) { return r->finished(); });
}

void Replica::take_released(std::vector<Request*>& out) {
  out.insert(out.end(), released_.begin(), released_.end());
  released_.clear();
}

OffloadCost Replica::offload_cost(const OffloadTraffic& traffic) const {
  OffloadCost c;
  // Each device copies its share of a block (bytes_per_block is per device) over its own
  // host link, all at once.
  const Bytes block = config_.kv.bytes_per_block;
  if (traffic.blocks_loaded > 0) {
    c.load = (traffic.blocks_loaded * block) / config_.host_to_device;
  }
  if (traffic.blocks_stored > 0) {
    c.store = (traffic.blocks_stored * block) / config_.device_to_host;
  }
  if (traffic.blocks_disk_read > 0) {
    c.load = c.load + (traffic.blocks_disk_read * config_.disk_bytes_per_block) /
                          config_.disk_read;
  }
  return c;
}

ReplicaView Replica::view() const {
  return {index_, outstanding_tokens_, num_unfinished_, &kv_};
}

std::int64_t Replica::num_waiting() const {
  return static_cast<std::int64_t>(queues_.waiting.size() + queues_.swapped.size() +
                                   arrived_.size() + landed_.size() + kv_reported_.size());
}

std::int64_t Replica::num_running() const {
  return static_cast<std::int64_t>(queues_.running.size());
}

}  // namespace vramsim::serving
