// parse_human_readable_int: vLLM's human_readable_int (vllm/engine/arg_utils.py), which its
// token-count flags use: "1k" -> 1,000, "1K" -> 1,024, "25.6k" -> 25,600 (its docstring's
// examples), decimals refused with binary suffixes.
#include <string>

#include "sim/core/text.hpp"
#include "tests/catch.hpp"

using vramsim::parse_human_readable_int;

TEST_CASE("human-readable integers read as vLLM reads them", "[core][text]") {
  CHECK(parse_human_readable_int("1k") == 1000);
  CHECK(parse_human_readable_int("1K") == 1024);
  CHECK(parse_human_readable_int("25.6k") == 25600);
  CHECK(parse_human_readable_int("8k") == 8000);
  CHECK(parse_human_readable_int("8K") == 8192);
  CHECK(parse_human_readable_int("32K") == 32768);
  CHECK(parse_human_readable_int("128k") == 128000);
  CHECK(parse_human_readable_int("2m") == 2000000);
  CHECK(parse_human_readable_int("1M") == 1048576);
  CHECK(parse_human_readable_int("1G") == 1073741824);
  CHECK(parse_human_readable_int("1t") == 1000000000000);
  CHECK(parse_human_readable_int("1.0001k") == 1000);  // int(float * mult) truncates
  CHECK(parse_human_readable_int(" 4096 ") == 4096);   // value.strip()
  CHECK(parse_human_readable_int("-1") == -1);
  CHECK(parse_human_readable_int("010") == 10);  // base 10, not octal
}

TEST_CASE("malformed human-readable integers say why", "[core][text]") {
  std::string why;
  CHECK_FALSE(parse_human_readable_int("1.5K", &why));
  CHECK(why.find("decimals are not allowed with binary suffixes like K") != std::string::npos);
  CHECK(why.find("did you mean 1.5k?") != std::string::npos);
  CHECK_FALSE(parse_human_readable_int("0x10", &why));
  CHECK(why.find("expected an integer") != std::string::npos);
  for (const char* bad : {"", "k", "-1k", "1.k", ".5k", "1kk", "1 k", "8KiB", "1e3"}) {
    INFO(bad);
    CHECK_FALSE(parse_human_readable_int(bad));
  }
  CHECK_FALSE(parse_human_readable_int("99999999999999999999", &why));
  CHECK(why.find("outside the 64-bit integer range") != std::string::npos);
  CHECK_FALSE(parse_human_readable_int("9999999999T"));
  CHECK_FALSE(parse_human_readable_int("99999999t"));
}
