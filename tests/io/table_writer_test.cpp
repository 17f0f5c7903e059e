// TableWriter: streaming rows into extendible datasets with bounded buffering.
#include "sim/io/table_writer.hpp"

#include "sim/io/results_file.hpp"
#include "sim/io/results_reader.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using vramsim::io::Column;
using vramsim::io::ColumnType;
using vramsim::io::ResultsReader;
using vramsim::io::ResultsWriter;
using vramsim::io::WriterOptions;
using vramsim::io::testing::ScratchDir;

TEST_CASE("rows appended one at a time and in batches read back in order", "[io][table]") {
  ScratchDir dir("stream");
  const fs::path path = dir / "run.h5";
  WriterOptions options;
  options.chunk_rows = 4;  // forces several flushes and extents
  std::vector<std::int64_t> expected_ids;
  std::vector<double> expected_ttft;
  std::vector<std::string> expected_phase;
  {
    ResultsWriter out(path, options);
    auto table = out.open_table("/requests", {{"request_id", ColumnType::kInt64, "1"},
                                              {"ttft", ColumnType::kFloat64, "s"},
                                              {"phase", ColumnType::kString, ""}});
    for (int i = 0; i < 10; ++i) {
      table.append_row({i, 0.25 * i, i % 2 == 0 ? "prefill" : "decode"});
      expected_ids.push_back(i);
      expected_ttft.push_back(0.25 * i);
      expected_phase.push_back(i % 2 == 0 ? "prefill" : "decode");
    }
    const std::vector<std::int64_t> ids{100, 101, 102};
    const std::vector<double> ttft{1.0, 2.0, 3.0};
    const std::vector<std::string> phase{"x", "", "z"};
    table.append({Column::int64("request_id", "1", ids), Column::float64("ttft", "s", ttft),
                  Column::string("phase", phase)});
    expected_ids.insert(expected_ids.end(), ids.begin(), ids.end());
    expected_ttft.insert(expected_ttft.end(), ttft.begin(), ttft.end());
    expected_phase.insert(expected_phase.end(), phase.begin(), phase.end());
    table.append_row({7u, 0.5f, std::string("tail")});
    expected_ids.push_back(7);
    expected_ttft.push_back(0.5);
    expected_phase.push_back("tail");
    CHECK(table.num_rows() == 14);
    out.finish();  // the last rows are still buffered here: finish must flush them
  }
  ResultsReader in(path);
  CHECK(in.table_columns("/requests") ==
        std::vector<std::string>{"request_id", "ttft", "phase"});
  CHECK(in.read_int_column("/requests/request_id") == expected_ids);
  CHECK(in.read_double_column("/requests/ttft") == expected_ttft);
  CHECK(in.read_string_column("/requests/phase") == expected_phase);
  CHECK(in.read_units("/requests/request_id") == "1");
  CHECK(in.read_units("/requests/ttft") == "s");
  CHECK(in.read_units("/requests/phase").empty());
}

TEST_CASE("a table handle dropped before finish still gets its buffered rows written",
          "[io][table]") {
  ScratchDir dir("dropped");
  const fs::path path = dir / "run.h5";
  {
    ResultsWriter out(path);
    {
      auto table = out.open_table("/timeseries", {{"time", ColumnType::kInt64, "ns"}});
      table.append_row({5});
      table.append_row({6});
    }
    out.finish();
  }
  CHECK(ResultsReader(path).read_int_column("/timeseries/time") ==
        std::vector<std::int64_t>{5, 6});
}

TEST_CASE("a table that never receives a row is an empty column with units", "[io][table]") {
  ScratchDir dir("emptytable");
  const fs::path path = dir / "run.h5";
  {
    ResultsWriter out(path);
    auto table = out.open_table("/summary", {{"kv_peak_blocks", ColumnType::kInt64, "1"}});
    out.finish();
  }
  ResultsReader in(path);
  CHECK(in.num_rows("/summary/kv_peak_blocks") == 0);
  CHECK(in.read_units("/summary/kv_peak_blocks") == "1");
}

TEST_CASE("a long streamed table stays small on disk", "[io][table][compression]") {
  ScratchDir dir("longstream");
  const fs::path path = dir / "run.h5";
  constexpr std::int64_t kRows = 300'000;
  {
    ResultsWriter out(path);
    auto table = out.open_table("/timeseries", {{"time", ColumnType::kInt64, "ns"},
                                                {"used_bytes", ColumnType::kInt64, "B"}});
    std::vector<std::int64_t> time(1000);
    std::vector<std::int64_t> used(1000);
    for (std::int64_t start = 0; start < kRows; start += 1000) {
      for (std::int64_t i = 0; i < 1000; ++i) {
        time[static_cast<std::size_t>(i)] = (start + i) * 1000;
        used[static_cast<std::size_t>(i)] = ((start + i) % 64) * 4096;
      }
      table.append({Column::int64("time", "ns", time), Column::int64("used_bytes", "B", used)});
    }
    out.finish();
  }
  INFO("file size " << fs::file_size(path) << " bytes for 4.8 MB of raw int64");
  CHECK(fs::file_size(path) < 500'000);
  ResultsReader in(path);
  const auto time = in.read_int_column("/timeseries/time");
  REQUIRE(time.size() == static_cast<std::size_t>(kRows));
  CHECK(time.back() == (kRows - 1) * 1000);
}
