#include "sim/io/pickle_writer.hpp"

#include "sim/core/check.hpp"

#include <bit>
#include <limits>

namespace vramsim::io {

namespace {

// Opcodes, as Lib/pickletools.py names them.
constexpr char kProto = '\x80';
constexpr char kMark = '(';
constexpr char kStop = '.';
constexpr char kEmptyDict = '}';
constexpr char kSetItems = 'u';
constexpr char kEmptyList = ']';
constexpr char kAppends = 'e';
constexpr char kBinInt1 = 'K';
constexpr char kBinInt2 = 'M';
constexpr char kBinInt = 'J';
constexpr char kLong1 = '\x8a';
constexpr char kBinFloat = 'G';
constexpr char kBinUnicode = 'X';
constexpr char kNewTrue = '\x88';
constexpr char kNewFalse = '\x89';
constexpr char kNone = 'N';

}  // namespace

PickleWriter::PickleWriter(std::ostream& out) : out_(out) {
  put(kProto);
  put('\x02');
}

void PickleWriter::put_le(std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) put(static_cast<char>((v >> (8 * i)) & 0xff));
}

void PickleWriter::put_string(std::string_view s) {
  VRAMSIM_CHECK(s.size() <= std::numeric_limits<std::uint32_t>::max(), "a {}-byte string",
                s.size());
  put(kBinUnicode);
  put_le(s.size(), 4);
  out_.write(s.data(), static_cast<std::streamsize>(s.size()));
}

void PickleWriter::before_value() {
  VRAMSIM_CHECK(!done_, "pickle value after finish()");
  if (open_.empty()) {
    VRAMSIM_CHECK(!have_root_, "a second top-level pickle value");
    have_root_ = true;
    return;
  }
  const Open& o = open_.back();
  VRAMSIM_CHECK(!o.dict || o.awaiting_value, "a dict value without its key");
}

void PickleWriter::after_value() {
  if (open_.empty()) return;
  Open& o = open_.back();
  o.awaiting_value = false;
  if (++o.pending == kBatch) {
    put(o.dict ? kSetItems : kAppends);
    put(kMark);
    o.pending = 0;
  }
}

void PickleWriter::begin_dict() {
  before_value();
  put(kEmptyDict);
  put(kMark);
  open_.push_back({.dict = true});
}

void PickleWriter::begin_list() {
  before_value();
  put(kEmptyList);
  put(kMark);
  open_.push_back({.dict = false});
}

void PickleWriter::end_dict() {
  VRAMSIM_CHECK(!open_.empty() && open_.back().dict && !open_.back().awaiting_value,
                "end_dict() without an open dict (or after a key)");
  put(kSetItems);
  open_.pop_back();
  after_value();
}

void PickleWriter::end_list() {
  VRAMSIM_CHECK(!open_.empty() && !open_.back().dict, "end_list() without an open list");
  put(kAppends);
  open_.pop_back();
  after_value();
}

void PickleWriter::key(std::string_view k) {
  VRAMSIM_CHECK(!open_.empty() && open_.back().dict && !open_.back().awaiting_value,
                "key() outside a dict or twice");
  put_string(k);
  open_.back().awaiting_value = true;
}

void PickleWriter::value(std::int64_t v) {
  before_value();
  if (v >= 0 && v < 256) {
    put(kBinInt1);
    put_le(static_cast<std::uint64_t>(v), 1);
  } else if (v >= 0 && v < 65536) {
    put(kBinInt2);
    put_le(static_cast<std::uint64_t>(v), 2);
  } else if (v >= std::numeric_limits<std::int32_t>::min() &&
             v <= std::numeric_limits<std::int32_t>::max()) {
    put(kBinInt);
    put_le(static_cast<std::uint32_t>(static_cast<std::int32_t>(v)), 4);
  } else {
    // LONG1: a length byte, then the two's complement little-endian bytes (8 always suffice).
    put(kLong1);
    put('\x08');
    put_le(static_cast<std::uint64_t>(v), 8);
  }
  after_value();
}

void PickleWriter::value(double v) {
  before_value();
  put(kBinFloat);
  const auto bits = std::bit_cast<std::uint64_t>(v);
  for (int i = 7; i >= 0; --i) put(static_cast<char>((bits >> (8 * i)) & 0xff));  // big-endian
  after_value();
}

void PickleWriter::value(bool v) {
  before_value();
  put(v ? kNewTrue : kNewFalse);
  after_value();
}

void PickleWriter::value(std::string_view v) {
  before_value();
  put_string(v);
  after_value();
}

void PickleWriter::none() {
  before_value();
  put(kNone);
  after_value();
}

void PickleWriter::finish() {
  VRAMSIM_CHECK(open_.empty(), "finish() with {} open containers", open_.size());
  VRAMSIM_CHECK(have_root_ && !done_, "finish() without a value, or twice");
  put(kStop);
  done_ = true;
}

}  // namespace vramsim::io
