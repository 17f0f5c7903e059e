#include "sim/io/toml_reader.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/catch.hpp"

using vramsim::Bytes;
using vramsim::ConfigError;
using vramsim::GB;
using vramsim::GiB;
using vramsim::io::TomlReader;

namespace {

/// The text of every problem, one per line, as the CLI prints them.
std::string problems_of(TomlReader& r) {
  try {
    r.finish();
  } catch (const ConfigError& e) {
    return e.report().format();
  }
  return {};
}

TomlReader reader(std::string_view text) { return TomlReader::from_string(text, "t.toml"); }

}  // namespace

TEST_CASE("typed accessors read values by dotted path", "[io][toml]") {
  TomlReader r = reader(R"(
name = "h100"
count = 8
ratio = 0.9
whole = 2
on = true
tags = ["a", "b"]
sizes = [1, 2, 3]
[memory]
total = "80GiB"
bandwidth = "3.35TB/s"
[compute]
bf16 = "989.4TFLOPS"
[fabric]
latency = "3.4us"
)");
  CHECK(r.required_string("name") == "h100");
  CHECK(r.required_int64("count") == 8);
  CHECK(r.required_double("ratio") == 0.9);
  CHECK(r.required_double("whole") == 2.0);  // an integer is a valid number
  CHECK(r.required_bool("on") == true);
  CHECK(r.required_string_array("tags") == std::vector<std::string>{"a", "b"});
  CHECK(r.required_int64_array("sizes") == std::vector<std::int64_t>{1, 2, 3});
  CHECK(r.required_bytes("memory.total") == GiB(80));
  CHECK(r.required_bandwidth("memory.bandwidth")->bytes_per_second() == 3.35e12);
  CHECK(r.required_flop_rate("compute.bf16")->per_second() == Approx(989.4e12));
  CHECK(r.required_duration("fabric.latency")->nanoseconds() == 3400);
  CHECK_FALSE(r.optional_string("absent").has_value());
  CHECK_FALSE(r.optional_bytes("memory.absent").has_value());
  CHECK(r.report().ok());
  CHECK_NOTHROW(r.finish());
}

TEST_CASE("GiB and GB stay apart when read from a file", "[io][toml]") {
  TomlReader r = reader("a = \"80GiB\"\nb = \"80GB\"\n");
  CHECK(r.required_bytes("a") == GiB(80));
  CHECK(r.required_bytes("b") == GB(80));
  CHECK(r.required_bytes("a") != r.required_bytes("b"));
}

TEST_CASE("a wrong unit is reported with file:line, the field and the core hint", "[io][toml]") {
  TomlReader r = reader("id = \"x\"\n\n[memory]\ntotal = \"80gb\"\n");
  r.required_string("id");
  CHECK_FALSE(r.required_bytes("memory.total").has_value());
  const std::string text = problems_of(r);
  CHECK_THAT(text, Catch::Contains("t.toml:4: memory.total: unknown unit \"gb\""));
  CHECK_THAT(text, Catch::Contains("case-sensitive"));
}

TEST_CASE("a bare number where a quantity is expected asks for a unit", "[io][toml]") {
  TomlReader r = reader("[memory]\ntotal = 80\nbandwidth = 3.35\n");
  CHECK_FALSE(r.required_bytes("memory.total").has_value());
  CHECK_FALSE(r.required_bandwidth("memory.bandwidth").has_value());
  const std::string text = problems_of(r);
  CHECK_THAT(text, Catch::Contains("t.toml:2: memory.total: the bare number 80 has no unit"));
  CHECK_THAT(text, Catch::Contains("e.g. \"80GiB\""));
  CHECK_THAT(text, Catch::Contains("t.toml:3: memory.bandwidth: the bare number 3.35 has no unit"));
}

TEST_CASE("a missing required field is reported at its table's line", "[io][toml]") {
  TomlReader r = reader("id = \"x\"\n[memory]\nkind = \"HBM3\"\n");
  r.required_string("id");
  r.required_string("memory.kind");
  CHECK_FALSE(r.required_bytes("memory.total").has_value());
  CHECK_FALSE(r.required_string("name").has_value());
  const std::string text = problems_of(r);
  CHECK_THAT(text, Catch::Contains("t.toml:2: memory.total: missing required field"));
  CHECK_THAT(text, Catch::Contains("t.toml: name: missing required field (expected a string)"));
}

TEST_CASE("a wrong type names what was expected and what was found", "[io][toml]") {
  TomlReader r = reader("n = \"8\"\nflag = 1\nlist = [\"a\", 2]\n");
  CHECK_FALSE(r.required_int64("n").has_value());
  CHECK_FALSE(r.required_bool("flag").has_value());
  CHECK_FALSE(r.required_string_array("list").has_value());
  const std::string text = problems_of(r);
  CHECK_THAT(text, Catch::Contains("t.toml:1: n: expected an integer, got a string (\"8\")"));
  CHECK_THAT(text, Catch::Contains("t.toml:2: flag: expected true or false, got an integer (1)"));
  CHECK_THAT(text, Catch::Contains("t.toml:3: list[1]: expected strings, got an integer (2)"));
}

TEST_CASE("keys nobody read are reported, with did-you-mean for near misses", "[io][toml]") {
  TomlReader r = reader("id = \"x\"\n[memory]\ntotl = \"80GiB\"\n[extra]\nfoo = 1\n");
  r.required_string("id");
  r.optional_bytes("memory.total");
  const std::string text = problems_of(r);
  CHECK_THAT(text, Catch::Contains("t.toml:3: memory.totl: unknown key; did you mean "
                                   "\"memory.total\"?"));
  CHECK_THAT(text, Catch::Contains("t.toml:5: extra.foo: unknown key"));
  CHECK(r.report().problems().size() == 2);
}

TEST_CASE("a key in the wrong table is suggested at its right place", "[io][toml]") {
  TomlReader r = reader("total = \"80GiB\"\n");
  r.optional_bytes("memory.total");
  CHECK_THAT(problems_of(r), Catch::Contains("total: unknown key; did you mean \"memory.total\"?"));
}

TEST_CASE("mark_read consumes a whole subtree", "[io][toml]") {
  TomlReader r = reader("[notes]\na = 1\nb = \"x\"\n");
  r.mark_read("notes");
  CHECK_NOTHROW(r.finish());
}

TEST_CASE("arrays of tables are read element by element", "[io][toml]") {
  TomlReader r = reader("[[replica]]\ngpu = \"h100-sxm\"\n[[replica]]\ngpu = \"l4\"\nbogus = 1\n");
  REQUIRE(r.array_size("replica") == 2);
  CHECK(r.required_string("replica[0].gpu") == "h100-sxm");
  CHECK(r.required_string("replica[1].gpu") == "l4");
  CHECK_THAT(problems_of(r), Catch::Contains("t.toml:5: replica[1].bogus: unknown key"));
}

TEST_CASE("tables are checked and listed", "[io][toml]") {
  TomlReader r = reader("x = 1\n[a]\nk2 = 2\nk1 = 1\n");
  CHECK(r.required_table("a"));
  CHECK_FALSE(r.required_table("x"));
  CHECK_FALSE(r.optional_table("missing"));
  CHECK(r.table_keys("a") == std::vector<std::string>{"k1", "k2"});
  CHECK(r.has("a.k1"));
  CHECK_FALSE(r.has("a.k3"));
  CHECK(r.location("a.k1").line == 4);
  CHECK(r.location("a.nothing").line == 2);
  r.mark_read("x");
  r.mark_read("a");
  CHECK_THAT(problems_of(r), Catch::Contains("t.toml:1: x: expected a table, got an integer (1)"));
}

TEST_CASE("a caller's own check is reported at the value's line", "[io][toml]") {
  TomlReader r = reader("\n\nnum_gpus = 0\n");
  const auto n = r.required_int64("num_gpus");
  if (n && *n < 1) r.error("num_gpus", "must be at least 1");
  CHECK_THAT(problems_of(r), Catch::Contains("t.toml:3: num_gpus: must be at least 1"));
}

TEST_CASE("a TOML syntax error gives file, line and column", "[io][toml]") {
  try {
    TomlReader::from_string("a = 1\nb = = 2\n", "bad.toml");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    const std::string text = e.report().format();
    CHECK_THAT(text, Catch::StartsWith("bad.toml:2: TOML syntax error at column"));
    CHECK(e.report().problems().front().where.line == 2);
  }
}

TEST_CASE("a missing file is a ConfigError naming the file", "[io][toml]") {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "vramsim-no-such.toml";
  try {
    TomlReader::from_file(file);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.report().format(), Catch::Contains(file.string() + ": no such file"));
  }
}

TEST_CASE("a file is read with its name in messages", "[io][toml]") {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "vramsim-toml-reader-test.toml";
  std::ofstream(file) << "v = \"12 parsecs\"\n";
  TomlReader r = TomlReader::from_file(file);
  CHECK(r.source_name() == file.string());
  CHECK_FALSE(r.required_bytes("v").has_value());
  CHECK_THAT(problems_of(r), Catch::Contains(file.string() + ":1: v: unknown unit \"parsecs\""));
  std::filesystem::remove(file);
}

TEST_CASE("join_path builds dotted and indexed paths", "[io][toml]") {
  CHECK(vramsim::io::join_path("", "id") == "id");
  CHECK(vramsim::io::join_path("memory", "total") == "memory.total");
  CHECK(vramsim::io::join_path("replica", "[0]") == "replica[0]");
}
