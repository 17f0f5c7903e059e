#include "sim/run/serve_timeline.hpp"

#include <fmt/format.h>

#include "sim/core/check.hpp"

namespace vramsim::run {

namespace {

/// Nanoseconds as the trace format's microseconds, exactly (3 decimals).
std::string micros(std::int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  const std::int64_t a = ns < 0 ? -ns : ns;
  return fmt::format("{}{}.{:03}", sign, a / 1000, a % 1000);
}

constexpr int kStepsThread = 0;

}  // namespace

ServeTimelineObserver::ServeTimelineObserver(std::ostream& out, int num_replicas) : out_(out) {
  out_ << "{\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"producer\": \"vramsim serve\", "
          "\"note\": \"pid = replica; ts and dur in microseconds\"},\n\"traceEvents\": [";
  for (int r = 0; r < num_replicas; ++r) {
    next() << fmt::format(
        "{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {0}, \"args\": {{\"name\": "
        "\"replica {0}\"}}}}",
        r);
    next() << fmt::format(
        "{{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {}, \"tid\": {}, \"args\": "
        "{{\"name\": \"steps\"}}}}",
        r, kStepsThread);
  }
}

std::ostream& ServeTimelineObserver::next() {
  VRAMSIM_CHECK(!finished_, "a timeline record after finish()");
  out_ << (first_ ? "\n" : ",\n");
  first_ = false;
  return out_;
}

void ServeTimelineObserver::on_sample(const serving::TimeSample& s) {
  const std::string_view name = s.batch_decodes == s.batch_tokens ? "decode"
                                : s.batch_decodes == 0            ? "prefill"
                                                                  : "mixed";
  const std::string ts = micros(s.time.nanoseconds());
  next() << fmt::format(
      "{{\"ph\": \"X\", \"name\": \"{}\", \"cat\": \"step\", \"pid\": {}, \"tid\": {}, \"ts\": "
      "{}, \"dur\": {}, \"args\": {{\"batch_tokens\": {}, \"batch_decodes\": {}, "
      "\"num_running\": {}, \"num_waiting\": {}, \"kv_used_blocks\": {}}}}}",
      name, s.replica, kStepsThread, ts, micros(s.step_latency.nanoseconds()), s.batch_tokens,
      s.batch_decodes, s.num_running, s.num_waiting, s.kv_used_blocks);
  next() << fmt::format(
      "{{\"ph\": \"C\", \"name\": \"requests\", \"pid\": {}, \"ts\": {}, \"args\": "
      "{{\"running\": {}, \"waiting\": {}}}}}",
      s.replica, ts, s.num_running, s.num_waiting);
  next() << fmt::format(
      "{{\"ph\": \"C\", \"name\": \"KV blocks in use\", \"pid\": {}, \"ts\": {}, \"args\": "
      "{{\"blocks\": {}}}}}",
      s.replica, ts, s.kv_used_blocks);
}

void ServeTimelineObserver::on_request(const serving::RequestRecord& r) {
  const int pid = r.replica < 0 ? 0 : r.replica;
  if (r.status == serving::RequestStatus::kRejected) {
    next() << fmt::format(
        "{{\"ph\": \"i\", \"s\": \"p\", \"name\": \"rejected\", \"cat\": \"request\", \"pid\": "
        "{}, \"tid\": {}, \"ts\": {}, \"args\": {{\"request_id\": {}, \"prompt_tokens\": {}}}}}",
        pid, kStepsThread, micros(r.arrival.nanoseconds()), r.id, r.prompt_tokens);
    return;
  }
  const struct {
    const char* name;
    SimTime begin, end;
  } phases[] = {{"queued", r.arrival, r.first_scheduled},
                {"prefill", r.first_scheduled, r.first_token},
                {"decode", r.first_token, r.finish}};
  for (const auto& p : phases) {
    next() << fmt::format(
        "{{\"ph\": \"b\", \"name\": \"{}\", \"cat\": \"request\", \"id\": {}, \"pid\": {}, "
        "\"ts\": {}, \"args\": {{\"prompt_tokens\": {}, \"output_tokens\": {}, "
        "\"cached_prefix_tokens\": {}, \"num_preemptions\": {}}}}}",
        p.name, r.id, pid, micros(p.begin.nanoseconds()), r.prompt_tokens, r.output_tokens,
        r.cached_prefix_tokens, r.num_preemptions);
    next() << fmt::format(
        "{{\"ph\": \"e\", \"name\": \"{}\", \"cat\": \"request\", \"id\": {}, \"pid\": {}, "
        "\"ts\": {}}}",
        p.name, r.id, pid, micros(p.end.nanoseconds()));
  }
}

void ServeTimelineObserver::finish() {
  VRAMSIM_CHECK(!finished_, "finish() twice");
  out_ << "\n]}\n";
  finished_ = true;
}

void TeeObserver::on_request(const serving::RequestRecord& r) {
  for (serving::ServingObserver* o : to_) {
    if (o != nullptr) o->on_request(r);
  }
}

void TeeObserver::on_sample(const serving::TimeSample& s) {
  for (serving::ServingObserver* o : to_) {
    if (o != nullptr) o->on_sample(s);
  }
}

}  // namespace vramsim::run
