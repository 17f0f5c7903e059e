// PickleWriter against hand-assembled protocol-2 bytes (opcodes as Lib/pickletools.py gives
// them), and its batching of long lists and dicts into SETITEMS / APPENDS of 1000 items.
#include "sim/io/pickle_writer.hpp"

#include <algorithm>
#include <sstream>
#include <string>

#include "tests/catch.hpp"

using vramsim::io::PickleWriter;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

}  // namespace

TEST_CASE("a small dict pickles to the exact protocol-2 bytes", "[io][pickle]") {
  std::ostringstream out;
  PickleWriter p(out);
  p.begin_dict();
  p.item("a", std::int64_t{1});
  p.key("l");
  p.begin_list();
  p.value(std::int64_t{300});
  p.value(std::int64_t{-1});
  p.value(std::int64_t{70000});
  p.value(std::int64_t{1} << 40);
  p.value(true);
  p.none();
  p.value(0.5);
  p.end_list();
  p.end_dict();
  p.finish();
  const std::string want =
      bytes({0x80, 2, '}', '('}) +                                  // PROTO 2, {}, MARK
      bytes({'X', 1, 0, 0, 0, 'a', 'K', 1}) +                       // "a": BININT1 1
      bytes({'X', 1, 0, 0, 0, 'l', ']', '('}) +                     // "l": [], MARK
      bytes({'M', 0x2c, 0x01}) +                                    // BININT2 300
      bytes({'J', 0xff, 0xff, 0xff, 0xff}) +                        // BININT -1
      bytes({'J', 0x70, 0x11, 0x01, 0x00}) +                        // BININT 70000
      bytes({0x8a, 8, 0, 0, 0, 0, 0, 1, 0, 0}) +                    // LONG1 2^40
      bytes({0x88, 'N'}) +                                          // NEWTRUE, NONE
      bytes({'G', 0x3f, 0xe0, 0, 0, 0, 0, 0, 0}) +                  // BINFLOAT 0.5
      bytes({'e', 'u', '.'});                                       // APPENDS SETITEMS STOP
  CHECK(out.str() == want);
}

TEST_CASE("long containers are written in batches of 1000 items", "[io][pickle]") {
  std::ostringstream out;
  PickleWriter p(out);
  p.begin_list();
  for (int i = 0; i < 2500; ++i) p.value(std::int64_t{7});
  p.end_list();
  p.finish();
  const std::string s = out.str();
  // 2500 items: APPENDS after the 1000th and 2000th (each followed by a new MARK), then the
  // closing APPENDS: 3 in all, and 2 + 1 MARKs (BININT1 7 is 'K' 0x07, neither opcode).
  CHECK(std::count(s.begin(), s.end(), 'e') == 3);
  CHECK(std::count(s.begin(), s.end(), '(') == 3);
  CHECK(s.size() == 2 + 2 + 2500 * 2 + 2 * 2 + 1 + 1);
}
