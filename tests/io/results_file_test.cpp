// ResultsWriter: crash safety (temp + rename), errors naming the path, compression and
// byte-for-byte determinism.
#include "sim/io/results_file.hpp"

#include "sim/core/error.hpp"
#include "sim/io/results_reader.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using vramsim::ConfigError;
using vramsim::io::Column;
using vramsim::io::ColumnSpec;
using vramsim::io::ColumnType;
using vramsim::io::ResultsReader;
using vramsim::io::ResultsWriter;
using vramsim::io::RunMetadata;
using vramsim::io::StringLayout;
using vramsim::io::testing::file_bytes;
using vramsim::io::testing::ScratchDir;
namespace io = vramsim::io;

namespace {

/// Writes a small but complete file: metadata, a table, a streaming table, both string layouts.
void write_sample(const fs::path& path, std::int64_t marker) {
  ResultsWriter out(path);
  out.write_run_metadata({.command = "vramsim budget --gpu h100-sxm",
                          .scenario_text = "[model]\nname = \"x\"\n",
                          .seed = 42,
                          .inputs = R"({"tp": 2})",
                          .calibration_source = "datasheet",
                          .created_by = "vramsim budget"});
  out.set_int_attribute("/meta", "marker", marker);
  std::vector<std::int64_t> ids(20000);
  std::vector<double> times(20000);
  std::vector<std::string> names(20000);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<std::int64_t>(i);
    times[i] = static_cast<double>(i) * 0.5;
    names[i] = (i % 2 == 0) ? "prefill" : "decode";
  }
  out.write_table("/events", {Column::int64("id", io::kUnitsCount, ids),
                              Column::float64("time", io::kUnitsSeconds, times),
                              Column::string("phase", names, StringLayout::kFixed),
                              Column::string("phase_vlen", names)});
  auto table = out.open_table("/stream", {{"step", ColumnType::kInt64, "1"},
                                          {"label", ColumnType::kString, ""}});
  for (int i = 0; i < 1000; ++i) table.append_row({i, i % 3 == 0 ? "a" : "bb"});
  out.finish();
}

}  // namespace

TEST_CASE("finish renames the temporary file onto the final name and no temporary file remains",
          "[io][crash]") {
  ScratchDir dir("finish");
  const fs::path final_path = dir / "run.h5";
  ResultsWriter out(final_path);
  CHECK(out.temp_path().parent_path() == dir.path());
  CHECK(out.temp_path().filename().string().rfind("run.h5.tmp-", 0) == 0);
  CHECK(fs::exists(out.temp_path()));
  CHECK_FALSE(fs::exists(final_path));

  out.set_string_attribute("/", "created_by", "test");
  out.finish();
  CHECK(out.finished());
  CHECK(dir.entries() == std::vector<std::string>{"run.h5"});
  CHECK(ResultsReader(final_path).read_string_attribute("/", "created_by") == "test");
}

TEST_CASE("a writer destroyed without finish leaves neither the final name nor a temporary file",
          "[io][crash]") {
  ScratchDir dir("abandon");
  {
    ResultsWriter out(dir / "run.h5");
    std::vector<std::int64_t> v{1, 2, 3};
    out.write_column("/budget", Column::int64("num_params", io::kUnitsCount, v));
    auto table = out.open_table("/stream", {{"x", ColumnType::kFloat64, "s"}});
    table.append_row({1.5});
  }
  CHECK(dir.entries().empty());
}

TEST_CASE("an exception before finish leaves the previous complete file intact", "[io][crash]") {
  ScratchDir dir("previous");
  const fs::path final_path = dir / "run.h5";
  {
    ResultsWriter first(final_path);
    first.set_int_attribute("/", "seed", 1);
    first.finish();
  }
  const std::vector<char> before = file_bytes(final_path);

  auto failing_run = [&] {
    ResultsWriter second(final_path);
    second.set_int_attribute("/", "seed", 2);
    std::vector<double> v(100000, 3.0);
    second.write_column("/timeseries", Column::float64("t", io::kUnitsSeconds, v));
    throw std::runtime_error("simulated crash");
  };
  CHECK_THROWS_AS(failing_run(), std::runtime_error);

  CHECK(dir.entries() == std::vector<std::string>{"run.h5"});
  CHECK(file_bytes(final_path) == before);
  CHECK(ResultsReader(final_path).read_int_attribute("/", "seed") == 1);
}

TEST_CASE("finishing a second file replaces the previous one atomically", "[io][crash]") {
  ScratchDir dir("replace");
  const fs::path final_path = dir / "run.h5";
  for (std::int64_t seed : {1, 2}) {
    ResultsWriter out(final_path);
    out.set_int_attribute("/", "seed", seed);
    out.finish();
  }
  CHECK(dir.entries() == std::vector<std::string>{"run.h5"});
  CHECK(ResultsReader(final_path).read_int_attribute("/", "seed") == 2);
}

TEST_CASE("two open writers of the same final name use distinct temporary files", "[io][crash]") {
  ScratchDir dir("twowriters");
  ResultsWriter a(dir / "run.h5");
  ResultsWriter b(dir / "run.h5");
  CHECK(a.temp_path() != b.temp_path());
  CHECK(dir.entries().size() == 2);
}

TEST_CASE("writing into a missing directory throws a ConfigError naming the path", "[io][errors]") {
  ScratchDir dir("missing");
  const fs::path target = dir / "no_such_dir" / "run.h5";
  try {
    ResultsWriter out(target);
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    CHECK(message.find(target.string()) != std::string::npos);
    CHECK(message.find("does not exist") != std::string::npos);
    REQUIRE(e.report().problems().size() == 1);
    CHECK(e.report().problems().front().field == "--out");
  }
  CHECK(dir.entries().empty());
}

TEST_CASE("a results path that is a directory throws a ConfigError naming it", "[io][errors]") {
  ScratchDir dir("isdir");
  fs::create_directories(dir / "run.h5");
  CHECK_THROWS_WITH(ResultsWriter(dir / "run.h5"),
                    Catch::Matchers::Contains((dir / "run.h5").string()));
}

TEST_CASE("a million regular int64 rows compress far below their raw 8 MB", "[io][compression]") {
  ScratchDir dir("million");
  const fs::path final_path = dir / "big.h5";
  std::vector<std::int64_t> ids(1'000'000);
  std::vector<std::int64_t> sizes(1'000'000);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<std::int64_t>(i);
    sizes[i] = static_cast<std::int64_t>(16 * (i % 128));
  }
  {
    ResultsWriter out(final_path);
    out.write_table("/requests", {Column::int64("request_id", io::kUnitsCount, ids),
                                  Column::int64("kv_bytes", io::kUnitsBytes, sizes)});
    out.finish();
  }
  const auto file_size = fs::file_size(final_path);
  INFO("file size " << file_size << " bytes for 16 MB of raw int64");
  CHECK(file_size < 1'000'000);  // two columns, 16 MB raw
  ResultsReader in(final_path);
  CHECK(in.read_int_column("/requests/request_id") == ids);
  CHECK(in.read_int_column("/requests/kv_bytes") == sizes);
}

TEST_CASE("the same content written twice gives identical datasets and identical bytes",
          "[io][determinism]") {
  ScratchDir dir("determinism");
  write_sample(dir / "a.h5", 7);
  write_sample(dir / "b.h5", 7);
  ResultsReader a(dir / "a.h5");
  ResultsReader b(dir / "b.h5");
  CHECK(a.list_groups("/") == b.list_groups("/"));
  CHECK(a.list_attributes("/") == b.list_attributes("/"));
  CHECK(a.read_string_attribute("/", "inputs") == b.read_string_attribute("/", "inputs"));
  CHECK(a.read_int_column("/events/id") == b.read_int_column("/events/id"));
  CHECK(a.read_double_column("/events/time") == b.read_double_column("/events/time"));
  CHECK(a.read_string_column("/events/phase") == b.read_string_column("/events/phase"));
  CHECK(a.read_string_column("/stream/label") == b.read_string_column("/stream/label"));
  // NOTE: object time stamps are off, and HDF5 stores no file name inside the file, so the
  // bytes match too. A different value must change them (the comparison is not vacuous).
  CHECK(file_bytes(dir / "a.h5") == file_bytes(dir / "b.h5"));
  write_sample(dir / "c.h5", 8);
  CHECK(file_bytes(dir / "a.h5") != file_bytes(dir / "c.h5"));
}
