// PickleWriter: Python pickle data (protocol 2) written as it is produced, for files Python tools
// open with pickle.load: the PyTorch memory snapshot (torch.cuda.memory._dump_snapshot's format,
// which pytorch.org/memory_viz reads). Only what those files need: dicts, lists, str, int, float,
// bool and None.
//
// Opcodes (Python's Lib/pickletools.py documents each): PROTO 2; EMPTY_DICT / EMPTY_LIST, then
// MARK ... SETITEMS / APPENDS in batches of at most kBatch items, as Python's own pickler batches
// them (the JavaScript unpickler of memory_viz spreads a batch into one call, so one unbounded
// batch of a million events would overflow its stack); BININT1 / BININT2 / BININT / LONG1 for
// integers, BINFLOAT (big-endian IEEE 754 double), BINUNICODE (UTF-8), NEWTRUE / NEWFALSE, NONE,
// STOP. No memo: every value is written once.
//
//   PickleWriter p(out);
//   p.begin_dict();
//   p.key("segments"); p.begin_list(); ... p.end_list();
//   p.end_dict();
//   p.finish();
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

namespace vramsim::io {

class PickleWriter {
 public:
  static constexpr std::int64_t kBatch = 1000;

  /// Writes the PROTO header.
  explicit PickleWriter(std::ostream& out);

  void begin_dict();
  void end_dict();
  void begin_list();
  void end_list();
  /// The next dict item's key (a str); its value follows.
  void key(std::string_view k);

  void value(std::int64_t v);
  void value(int v) { value(static_cast<std::int64_t>(v)); }
  void value(double v);
  void value(bool v);
  void value(std::string_view v);
  void value(const char* v) { value(std::string_view(v)); }
  void none();

  /// key(k) then value(v).
  template <typename T>
  void item(std::string_view k, const T& v) {
    key(k);
    value(v);
  }

  /// Writes STOP. Every container must be closed.
  void finish();

 private:
  struct Open {
    bool dict = false;
    std::int64_t pending = 0;  // items since the last MARK
    bool awaiting_value = false;
  };
  void before_value();
  void after_value();
  void put(char c) { out_.put(c); }
  void put_le(std::uint64_t v, int bytes);
  void put_string(std::string_view s);

  std::ostream& out_;
  std::vector<Open> open_;
  bool done_ = false;
  bool have_root_ = false;
};

}  // namespace vramsim::io
