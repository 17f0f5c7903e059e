#include "sim/run/train_timeline.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <string>
#include <unordered_map>

#include "sim/core/check.hpp"
#include "sim/io/pickle_writer.hpp"
#include "sim/memory/caching_allocator.hpp"

namespace vramsim::run {

namespace {

using training::AllocationAction;
using training::MemoryCategory;
using training::Op;
using training::Stream;

/// Nanoseconds as the trace format's microseconds, exactly (3 decimals).
std::string micros(std::int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  const std::int64_t a = ns < 0 ? -ns : ns;
  return fmt::format("{}{}.{:03}", sign, a / 1000, a % 1000);
}

std::string json_string(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

/// Writes the comma between array elements.
class EventList {
 public:
  explicit EventList(std::ostream& out) : out_(out) {}
  std::ostream& next() {
    out_ << (first_ ? "\n" : ",\n");
    first_ = false;
    return out_;
  }

 private:
  std::ostream& out_;
  bool first_ = true;
};

}  // namespace

void write_train_chrome_trace(const training::TrainingSetup& setup,
                              const training::TrainingResult& r, std::ostream& out) {
  const training::OpGraph& g = r.graph;
  out << "{\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"producer\": \"vramsim train\", "
      << "\"model\": " << json_string(setup.model.name) << ", \"gpu\": " << json_string(setup.device.id)
      << ", \"note\": \"pid = pipeline stage, tid = stream; ts and dur in microseconds\"},\n"
      << "\"traceEvents\": [";
  EventList events(out);
  for (int d = 0; d < g.num_devices; ++d) {
    events.next() << fmt::format(
        "{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {}, \"args\": {{\"name\": "
        "\"pipeline stage {}\"}}}}",
        d, d);
    events.next() << fmt::format(
        "{{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": {}, \"args\": "
        "{{\"sort_index\": {}}}}}",
        d, d);
    for (int s = 0; s < training::kNumStreams; ++s) {
      events.next() << fmt::format(
          "{{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {}, \"tid\": {}, \"args\": "
          "{{\"name\": {}}}}}",
          d, s, json_string(training::to_string(static_cast<Stream>(s))));
    }
  }
  for (const training::OpRecord& rec : r.ops) {
    const Op& op = g.ops[static_cast<std::size_t>(rec.op)];
    events.next() << fmt::format(
        "{{\"ph\": \"X\", \"name\": {}, \"cat\": {}, \"pid\": {}, \"tid\": {}, \"ts\": {}, "
        "\"dur\": {}, \"args\": {{\"step\": {}, \"micro_batch\": {}, \"layer\": {}}}}}",
        json_string(training::op_name(op)), json_string(training::to_string(op.kind)), op.device,
        static_cast<int>(op.stream), micros(rec.start_ns), micros(rec.end_ns - rec.start_ns),
        op.step, op.micro_batch, op.layer);
  }
  for (const training::MemorySample& m : r.memory) {
    events.next() << fmt::format(
        "{{\"ph\": \"C\", \"name\": \"memory (bytes)\", \"pid\": {}, \"ts\": {}, \"args\": "
        "{{\"allocated\": {}, \"reserved\": {}}}}}",
        m.device, micros(m.time_ns), m.allocated, m.reserved);
    std::string cats;
    for (int k = 0; k < training::kNumMemoryCategories; ++k) {
      cats += fmt::format("{}{}: {}", k == 0 ? "" : ", ",
                          json_string(training::to_string(static_cast<MemoryCategory>(k))),
                          m.bytes[static_cast<std::size_t>(k)]);
    }
    events.next() << fmt::format(
        "{{\"ph\": \"C\", \"name\": \"memory by category (bytes)\", \"pid\": {}, \"ts\": {}, "
        "\"args\": {{{}}}}}",
        m.device, micros(m.time_ns), cats);
  }
  out << "\n]}\n";
}

void write_train_memory_snapshot(const training::TrainingResult& r, std::ostream& out) {
  const training::OpGraph& g = r.graph;
  VRAMSIM_CHECK(r.final_segments.size() == static_cast<std::size_t>(g.num_devices),
                "a memory snapshot needs a result simulated with record_allocations");
  std::vector<std::unordered_map<std::int64_t, std::int32_t>> live(r.final_segments.size());
  for (const training::LiveBuffer& b : r.live_at_end) {
    live[static_cast<std::size_t>(b.device)][b.address] = b.buffer;
  }
  // The op that allocated each buffer: its frame for the blocks still live at the end.
  std::vector<std::int32_t> allocated_by(g.buffers.size(), -1);
  for (const training::AllocationEvent& e : r.allocations) {
    if (e.action == AllocationAction::kAlloc) {
      allocated_by[static_cast<std::size_t>(e.buffer)] = e.op;
    }
  }
  io::PickleWriter p(out);
  // One frame per event, naming the op and the buffer's category: the viewer prints a block's
  // frames as its stack trace.
  const auto frames = [&](std::int32_t buffer, std::int32_t op) {
    p.begin_list();
    if (buffer >= 0) {
      const training::Buffer& buf = g.buffers[static_cast<std::size_t>(buffer)];
      p.begin_dict();
      p.item("filename", fmt::format("vramsim/{}", training::to_string(buf.category)));
      p.item("line", static_cast<std::int64_t>(buffer));
      p.item("name", op >= 0 ? training::op_name(g.ops[static_cast<std::size_t>(op)])
                             : std::string("(before the run)"));
      p.end_dict();
    }
    p.end_list();
  };
  const auto category = [&](std::int32_t buffer) {
    return std::string(buffer >= 0 ? training::to_string(
                                         g.buffers[static_cast<std::size_t>(buffer)].category)
                                   : "unknown");
  };
  p.begin_dict();
  p.key("segments");
  p.begin_list();
  for (std::size_t d = 0; d < r.final_segments.size(); ++d) {
    for (const memory::SegmentState& seg : r.final_segments[d]) {
      std::int64_t allocated = 0, requested = 0;
      for (const memory::SegmentState::Block& b : seg.blocks) {
        if (!b.allocated) continue;
        allocated += b.size;
        const auto it = live[d].find(b.address);
        VRAMSIM_CHECK(it != live[d].end(), "an allocated block without a buffer");
        requested += g.buffers[static_cast<std::size_t>(it->second)].size.count();
      }
      p.begin_dict();
      p.item("device", static_cast<std::int64_t>(d));
      p.item("address", seg.address);
      p.item("total_size", seg.size);
      p.item("allocated_size", allocated);
      p.item("active_size", allocated);
      p.item("requested_size", requested);
      p.item("stream", std::int64_t{seg.stream});
      p.item("segment_type", seg.small ? "small" : "large");
      p.item("segment_pool_id", std::int64_t{0});
      p.item("is_expandable", false);
      p.key("frames");
      frames(-1, -1);
      p.key("blocks");
      p.begin_list();
      for (const memory::SegmentState::Block& b : seg.blocks) {
        std::int32_t buffer = -1;
        if (b.allocated) buffer = live[d].at(b.address);
        p.begin_dict();
        p.item("address", b.address);
        p.item("size", b.size);
        p.item("requested_size",
               buffer >= 0 ? g.buffers[static_cast<std::size_t>(buffer)].size.count() : b.size);
        p.item("state", b.allocated ? "active_allocated" : "inactive");
        p.key("frames");
        frames(buffer, buffer >= 0 ? allocated_by[static_cast<std::size_t>(buffer)] : -1);
        p.end_dict();
      }
      p.end_list();
      p.end_dict();
    }
  }
  p.end_list();
  p.key("device_traces");
  p.begin_list();
  for (int d = 0; d < g.num_devices; ++d) {
    p.begin_list();
    for (const training::AllocationEvent& e : r.allocations) {
      if (e.device != d) continue;
      // A free is PyTorch's free_requested then free_completed (the viewer joins the pair).
      const bool is_free = e.action == AllocationAction::kFree;
      for (int half = 0; half < (is_free ? 2 : 1); ++half) {
        std::string_view action;
        switch (e.action) {
          case AllocationAction::kSegmentAlloc: action = "segment_alloc"; break;
          case AllocationAction::kSegmentFree: action = "segment_free"; break;
          case AllocationAction::kAlloc: action = "alloc"; break;
          case AllocationAction::kFree: action = half == 0 ? "free_requested" : "free_completed";
                                        break;
        }
        p.begin_dict();
        p.item("action", action);
        p.item("addr", e.address);
        p.item("size", e.size);
        p.item("stream", std::int64_t{0});
        p.item("time_us", e.time_ns / 1000);
        // NOTE: memory_viz colours by category and expects "unknown" among the categories once
        // any event has one: segment events carry it.
        p.item("category", category(e.buffer));
        p.key("frames");
        frames(e.buffer, e.op);
        p.end_dict();
      }
    }
    p.end_list();
  }
  p.end_list();
  p.end_dict();
  p.finish();
}

}  // namespace vramsim::run
