#include "sim/hardware/calibration_profile.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <set>
#include <utility>

// The reading half of calibration_profile.hpp: structural reading of the JSON with every
// problem collected under its field path, then the value checks of validate().

namespace vramsim::calibration {

namespace {

using nlohmann::json;

// Reads the members of one JSON object, recording every problem under `path`.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string path, ValidationReport& report,
               const std::string& file, std::set<std::string> derived = {})
      : j_(j), path_(std::move(path)), report_(report), file_(file),
        derived_(std::move(derived)) {
    if (!j_.is_object()) {
      error(path_, "must be a JSON object");
      ok_ = false;
    }
  }
  ObjectReader(const ObjectReader&) = delete;
  ObjectReader& operator=(const ObjectReader&) = delete;
  ~ObjectReader() {
    if (!ok_) return;
    for (const auto& item : j_.items()) {
      if (seen_.count(item.key()) == 0 && derived_.count(item.key()) == 0) {
        error(at(item.key()), "unknown key");
      }
    }
  }

  std::string at(std::string_view key) const {
    return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  }
  void error(const std::string& field, const std::string& message) const {
    report_.error(field, message, SourceLocation{file_, 0});
  }

  // The member `key`, or nullptr (with a problem) when the object lacks it.
  const json* member(std::string_view key) {
    if (!ok_) return nullptr;
    seen_.insert(std::string(key));
    const auto it = j_.find(std::string(key));
    if (it == j_.end()) {
      error(at(key), "missing");
      return nullptr;
    }
    return &*it;
  }

  void get(std::string_view key, std::int64_t& out) {
    if (const json* v = member(key)) {
      if (v->is_number_integer()) {
        out = v->get<std::int64_t>();
      } else {
        error(at(key), fmt::format("must be an integer, got {}", v->dump()));
      }
    }
  }
  void get(std::string_view key, std::int32_t& out) {
    std::int64_t wide = out;
    get(key, wide);
    if (wide < INT32_MIN || wide > INT32_MAX) {
      error(at(key), fmt::format("out of range: {}", wide));
      return;
    }
    out = static_cast<std::int32_t>(wide);
  }
  void get(std::string_view key, double& out) {
    if (const json* v = member(key)) {
      if (v->is_number()) {
        out = v->get<double>();
      } else {
        error(at(key), fmt::format("must be a number, got {}", v->dump()));
      }
    }
  }
  void get(std::string_view key, std::string& out) {
    if (const json* v = member(key)) {
      if (v->is_string()) {
        out = v->get<std::string>();
      } else {
        error(at(key), fmt::format("must be a string, got {}", v->dump()));
      }
    }
  }
  void get(std::string_view key, bool& out) {
    if (const json* v = member(key)) {
      if (v->is_boolean()) {
        out = v->get<bool>();
      } else {
        error(at(key), fmt::format("must be true or false, got {}", v->dump()));
      }
    }
  }
  // A string member turned into an enum by `parse`; `valid` lists the names for the message.
  template <class E, class Parse>
  void get_enum(std::string_view key, E& out, Parse parse, std::string_view valid) {
    std::string s;
    const std::size_t before = report_.problems().size();
    get(key, s);
    if (report_.problems().size() != before || member_missing(key)) return;
    if (const std::optional<E> e = parse(s)) {
      out = *e;
    } else {
      error(at(key), fmt::format("unknown value '{}'; valid: {}", s, valid));
    }
  }

  bool ok() const { return ok_; }
  bool member_missing(std::string_view key) const { return !j_.contains(std::string(key)); }
  ValidationReport& report() const { return report_; }
  const std::string& file() const { return file_; }

 private:
  const json& j_;
  std::string path_;
  ValidationReport& report_;
  const std::string& file_;
  std::set<std::string> derived_;
  std::set<std::string> seen_;
  bool ok_ = true;
};

void read_timing(ObjectReader& parent, Timing& t) {
  const json* j = parent.member("timing");
  if (j == nullptr) return;
  ObjectReader r(*j, parent.at("timing"), parent.report(), parent.file());
  r.get("median_s", t.median_s);
  r.get("min_s", t.min_s);
  r.get("max_s", t.max_s);
  r.get("q1_s", t.q1_s);
  r.get("q3_s", t.q3_s);
  r.get("num_repetitions", t.num_repetitions);
}

void read_common(ObjectReader& r, Timing& t, CheckOutcome& check) {
  read_timing(r, t);
  r.get_enum("check", check, check_outcome_from_string, names_list<kCheckOutcomes>());
}

// Reads every element of the array `key` of `parent` with `read_one(reader, record)`.
template <class Record, class ReadOne>
void read_array(ObjectReader& parent, std::string_view key, std::vector<Record>& out,
                const std::set<std::string>& derived, ReadOne read_one) {
  const json* j = parent.member(key);
  if (j == nullptr) return;
  if (!j->is_array()) {
    parent.error(parent.at(key), "must be a JSON array");
    return;
  }
  for (std::size_t i = 0; i < j->size(); ++i) {
    Record rec;
    ObjectReader r((*j)[i], fmt::format("{}[{}]", parent.at(key), i), parent.report(),
                   parent.file(), derived);
    if (r.ok()) read_one(r, rec);
    out.push_back(std::move(rec));
  }
}

// The accepted range of a timing (see check_timing) and the ceilings of the rates derived
// from a record: a thousand times a B200's 2.25e15 dense FP8 FLOP/s, and a PB/s.
constexpr double kMinTimingSeconds = 1e-8;
constexpr double kMaxTimingSeconds = 1e3;
constexpr double kMaxFlopRatePerS = 1e18;
constexpr double kMaxBytesPerS = 1e15;
constexpr double kMaxMemoryBytes = 64.0 * 1099511627776.0;  // 64 TiB

/// Refuses a record whose work over its median time passes `ceiling` (per second).
void check_rate(ValidationReport& report, const std::string& file, const std::string& at,
                double work, const Timing& t, double ceiling, const char* unit) {
  if (!(t.median_s > 0) || !(work > 0)) return;  // reported as not positive
  const double rate = work / t.median_s;
  if (!(rate <= ceiling)) {
    report.error(at + ".timing.median_s",
                 fmt::format("{:g} s for this record means {:.3g} {}: over the accepted {:g} {}",
                             t.median_s, rate, unit, ceiling, unit),
                 {file, 0});
  }
}

// Value checks shared by the reader and validate().
void check_positive(ValidationReport& report, const std::string& file, const std::string& field,
                    double value) {
  if (!(value > 0)) report.error(field, fmt::format("must be positive, got {}", value), {file, 0});
}

void check_timing(ValidationReport& report, const std::string& file, const std::string& at,
                  const Timing& t) {
  const std::string p = at + ".timing";
  check_positive(report, file, p + ".median_s", t.median_s);
  if (!(t.min_s <= t.q1_s && t.q1_s <= t.median_s && t.median_s <= t.q3_s && t.q3_s <= t.max_s)) {
    report.error(p, fmt::format("must satisfy min_s <= q1_s <= median_s <= q3_s <= max_s, got "
                                "{} {} {} {} {}", t.min_s, t.q1_s, t.median_s, t.q3_s, t.max_s),
                 {file, 0});
  }
  if (t.min_s < 0) report.error(p + ".min_s", "must not be negative", {file, 0});
  // A kernel or transfer is timed in microseconds to seconds; outside [10 ns, 1000 s] a number
  // is a unit slip or a corrupted file, and the times the simulator derives from it would not
  // fit its nanosecond clock.
  if (t.median_s > 0 && !(t.median_s >= kMinTimingSeconds && t.median_s <= kMaxTimingSeconds)) {
    report.error(p + ".median_s",
                 fmt::format("{:g} s is outside the accepted range [{:g}, {:g}] s", t.median_s,
                             kMinTimingSeconds, kMaxTimingSeconds),
                 {file, 0});
  }
  if (!(t.max_s <= kMaxTimingSeconds)) {
    report.error(p + ".max_s",
                 fmt::format("{:g} s is over the accepted {:g} s", t.max_s, kMaxTimingSeconds),
                 {file, 0});
  }
  if (t.num_repetitions < 1) {
    report.error(p + ".num_repetitions",
                 fmt::format("must be at least 1, got {}", t.num_repetitions), {file, 0});
  }
}

void check_dtype(ValidationReport& report, const std::string& file, const std::string& field,
                 const std::string& dtype) {
  static const std::set<std::string> kDtypes = {"fp32", "fp16", "bf16", "fp8"};
  if (kDtypes.count(dtype) == 0) {
    report.error(field, fmt::format("unknown dtype '{}'; valid: bf16, fp16, fp8, fp32", dtype),
                 {file, 0});
  }
}

}  // namespace

CalibrationProfile profile_from_json(const json& j, const std::string& source_file,
                                     ValidationReport& report) {
  CalibrationProfile p;
  p.source_file = source_file;
  const std::size_t before = report.problems().size();
  {
    ObjectReader r(j, "", report, source_file);
    if (!r.ok()) return p;
    std::string format;
    r.get("format", format);
    if (r.member("format") != nullptr && format != kProfileFormat) {
      r.error("format", fmt::format("must be \"{}\", got \"{}\"", kProfileFormat, format));
    }
    r.get("format_version", p.format_version);
    r.get("device_id", p.device_id);
    r.get("synthetic", p.synthetic);
    r.get("note", p.note);
    if (const json* v = r.member("identity")) {
      ObjectReader ir(*v, "identity", report, source_file);
      DeviceIdentity& id = p.identity;
      ir.get("name", id.name);
      ir.get("model", id.model);
      ir.get("driver_version", id.driver_version);
      ir.get("cuda_runtime_version", id.cuda_runtime_version);
      ir.get("nccl_version", id.nccl_version);
      ir.get("date", id.date);
      ir.get("command", id.command);
      ir.get("num_devices", id.num_devices);
    }
    if (const json* v = r.member("memory")) {
      ObjectReader mr(*v, "memory", report, source_file);
      MemoryRecord& m = p.memory;
      mr.get("total_bytes", m.total_bytes);
      mr.get("free_bytes", m.free_bytes);
      mr.get("cuda_context_bytes", m.cuda_context_bytes);
      mr.get("cublas_handle_bytes", m.cublas_handle_bytes);
      mr.get("cublas_workspace_bytes", m.cublas_workspace_bytes);
      mr.get("nccl_communicator_bytes", m.nccl_communicator_bytes);
      mr.get("nccl_communicator_ranks", m.nccl_communicator_ranks);
      mr.get("allocation_granularity_bytes", m.allocation_granularity_bytes);
    }
    read_array(r, "copy", p.copies, {"bandwidth_bytes_per_s"}, [](ObjectReader& e, CopyRecord& c) {
      e.get_enum("kind", c.kind, copy_kind_from_string, names_list<kCopyKinds>());
      e.get("bytes", c.bytes);
      read_common(e, c.timing, c.check);
    });
    read_array(r, "gemm", p.gemms, {"flops", "flop_rate_per_s"}, [](ObjectReader& e, GemmRecord& g) {
      e.get("dtype", g.dtype);
      e.get("m", g.m);
      e.get("n", g.n);
      e.get("k", g.k);
      e.get("label", g.label);
      read_common(e, g.timing, g.check);
    });
    read_array(r, "decode_attention", p.decode_attention, {"kv_bytes", "bandwidth_bytes_per_s"},
               [](ObjectReader& e, DecodeAttentionRecord& a) {
                 e.get("batch", a.batch);
                 e.get("context", a.context);
                 e.get("num_q_heads", a.num_q_heads);
                 e.get("num_kv_heads", a.num_kv_heads);
                 e.get("head_dim", a.head_dim);
                 e.get("block_size", a.block_size);
                 e.get("kv_dtype", a.kv_dtype);
                 read_common(e, a.timing, a.check);
               });
    read_array(r, "prefill_attention", p.prefill_attention, {"flops", "flop_rate_per_s"},
               [](ObjectReader& e, PrefillAttentionRecord& a) {
                 e.get("batch", a.batch);
                 e.get("seq_len", a.seq_len);
                 e.get("num_q_heads", a.num_q_heads);
                 e.get("num_kv_heads", a.num_kv_heads);
                 e.get("head_dim", a.head_dim);
                 e.get("dtype", a.dtype);
                 e.get("implementation", a.implementation);
                 read_common(e, a.timing, a.check);
               });
    read_array(r, "collectives", p.collectives, {"algbw_bytes_per_s", "busbw_bytes_per_s"},
               [](ObjectReader& e, CollectiveRecord& c) {
                 e.get_enum("op", c.op, collective_op_from_string, names_list<kCollectiveOps>());
                 e.get("num_ranks", c.num_ranks);
                 e.get("num_nodes", c.num_nodes);
                 e.get("bytes", c.bytes);
                 e.get("dtype", c.dtype);
                 read_common(e, c.timing, c.check);
               });
  }
  // Value checks only on a structurally sound profile, so each problem is reported once.
  if (report.problems().size() == before) validate(p, report);
  return p;
}

void validate(const CalibrationProfile& p, ValidationReport& report) {
  const std::string& f = p.source_file;
  auto positive = [&](const std::string& field, double v) { check_positive(report, f, field, v); };
  if (p.format_version != kProfileFormatVersion) {
    report.error("format_version",
                 fmt::format("must be {}, got {}", kProfileFormatVersion, p.format_version),
                 {f, 0});
  }
  if (p.device_id.empty()) report.error("device_id", "must name a device sheet", {f, 0});
  if (p.identity.num_devices < 1) {
    report.error("identity.num_devices", "must be at least 1", {f, 0});
  }
  const MemoryRecord& m = p.memory;
  const std::array<std::pair<const char*, std::int64_t>, 7> mem = {{
      {"total_bytes", m.total_bytes},
      {"free_bytes", m.free_bytes},
      {"cuda_context_bytes", m.cuda_context_bytes},
      {"cublas_handle_bytes", m.cublas_handle_bytes},
      {"cublas_workspace_bytes", m.cublas_workspace_bytes},
      {"nccl_communicator_bytes", m.nccl_communicator_bytes},
      {"allocation_granularity_bytes", m.allocation_granularity_bytes},
  }};
  for (const auto& [name, value] : mem) {
    if (value < 0) {
      report.error(fmt::format("memory.{}", name), fmt::format("must not be negative, got {}",
                                                               value), {f, 0});
    }
  }
  if (static_cast<double>(m.total_bytes) > kMaxMemoryBytes) {
    report.error("memory.total_bytes",
                 fmt::format("{} is over the accepted {:g} bytes (64 TiB)", m.total_bytes,
                             kMaxMemoryBytes),
                 {f, 0});
  }
  if (m.total_bytes > 0 && m.cuda_context_bytes > m.total_bytes) {
    report.error("memory.cuda_context_bytes",
                 fmt::format("{} exceeds total_bytes {}: a CUDA context larger than the device",
                             m.cuda_context_bytes, m.total_bytes),
                 {f, 0});
  }
  if (m.free_bytes > m.total_bytes) {
    report.error("memory.free_bytes", fmt::format("{} exceeds total_bytes {}", m.free_bytes,
                                                  m.total_bytes), {f, 0});
  }
  if (m.nccl_communicator_bytes > 0 && m.nccl_communicator_ranks < 1) {
    report.error("memory.nccl_communicator_ranks", "must be at least 1 when a communicator "
                 "was measured", {f, 0});
  }
  for (std::size_t i = 0; i < p.copies.size(); ++i) {
    const std::string at = fmt::format("copy[{}]", i);
    positive(at + ".bytes", static_cast<double>(p.copies[i].bytes));
    check_timing(report, f, at, p.copies[i].timing);
    check_rate(report, f, at, static_cast<double>(p.copies[i].bytes), p.copies[i].timing,
               kMaxBytesPerS, "B/s");
  }
  for (std::size_t i = 0; i < p.gemms.size(); ++i) {
    const GemmRecord& g = p.gemms[i];
    const std::string at = fmt::format("gemm[{}]", i);
    check_dtype(report, f, at + ".dtype", g.dtype);
    positive(at + ".m", static_cast<double>(g.m));
    positive(at + ".n", static_cast<double>(g.n));
    positive(at + ".k", static_cast<double>(g.k));
    check_timing(report, f, at, g.timing);
    check_rate(report, f, at,
               2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k),
               g.timing, kMaxFlopRatePerS, "FLOP/s");
  }
  for (std::size_t i = 0; i < p.decode_attention.size(); ++i) {
    const DecodeAttentionRecord& a = p.decode_attention[i];
    const std::string at = fmt::format("decode_attention[{}]", i);
    check_dtype(report, f, at + ".kv_dtype", a.kv_dtype);
    positive(at + ".batch", static_cast<double>(a.batch));
    positive(at + ".context", static_cast<double>(a.context));
    positive(at + ".num_q_heads", static_cast<double>(a.num_q_heads));
    positive(at + ".num_kv_heads", static_cast<double>(a.num_kv_heads));
    positive(at + ".head_dim", static_cast<double>(a.head_dim));
    positive(at + ".block_size", static_cast<double>(a.block_size));
    if (a.num_kv_heads > 0 && a.num_q_heads % a.num_kv_heads != 0) {
      report.error(at + ".num_q_heads", fmt::format("{} is not a multiple of num_kv_heads {}",
                                                    a.num_q_heads, a.num_kv_heads), {f, 0});
    }
    check_timing(report, f, at, a.timing);
  }
  for (std::size_t i = 0; i < p.prefill_attention.size(); ++i) {
    const PrefillAttentionRecord& a = p.prefill_attention[i];
    const std::string at = fmt::format("prefill_attention[{}]", i);
    check_dtype(report, f, at + ".dtype", a.dtype);
    positive(at + ".batch", static_cast<double>(a.batch));
    positive(at + ".seq_len", static_cast<double>(a.seq_len));
    positive(at + ".num_q_heads", static_cast<double>(a.num_q_heads));
    positive(at + ".num_kv_heads", static_cast<double>(a.num_kv_heads));
    positive(at + ".head_dim", static_cast<double>(a.head_dim));
    check_timing(report, f, at, a.timing);
  }
  for (std::size_t i = 0; i < p.collectives.size(); ++i) {
    const CollectiveRecord& c = p.collectives[i];
    const std::string at = fmt::format("collectives[{}]", i);
    check_dtype(report, f, at + ".dtype", c.dtype);
    positive(at + ".num_ranks", c.num_ranks);
    positive(at + ".num_nodes", c.num_nodes);
    positive(at + ".bytes", static_cast<double>(c.bytes));
    check_timing(report, f, at, c.timing);
    check_rate(report, f, at, static_cast<double>(c.bytes), c.timing, kMaxBytesPerS, "B/s");
  }
}

}  // namespace vramsim::calibration
