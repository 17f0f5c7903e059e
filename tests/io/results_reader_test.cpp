// Round trips through ResultsWriter and ResultsReader: attributes, each column type with its
// units, table column order, listing, and the errors a user's file can trigger.
#include "sim/io/results_reader.hpp"

#include "sim/core/error.hpp"
#include "sim/io/results_file.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using vramsim::ConfigError;
using vramsim::io::Column;
using vramsim::io::ColumnType;
using vramsim::io::ResultsReader;
using vramsim::io::ResultsWriter;
using vramsim::io::StringLayout;
using vramsim::io::testing::ScratchDir;
namespace io = vramsim::io;

TEST_CASE("run metadata and attributes of each type round-trip", "[io][reader]") {
  ScratchDir dir("attrs");
  const fs::path path = dir / "run.h5";
  {
    ResultsWriter out(path);
    out.write_run_metadata({.command = "vramsim serve s.toml --out run.h5",
                            .scenario_text = "[trace]\nkind = \"poisson\"  # ünïcödé\n",
                            .seed = -3,
                            .inputs = R"({"rate_per_s": 2.5})",
                            .calibration_source = "topologies/h100/calibration/x.csv",
                            .created_by = "vramsim serve"});
    out.set_string_attribute("/meta", "status", "ok");
    out.set_int_attribute("/meta", "num_devices", std::numeric_limits<std::int64_t>::max());
    out.set_double_attribute("/meta", "gpu_memory_utilization", 0.9);
    out.set_double_attribute("/meta", "gpu_memory_utilization", 0.85);  // replaces
    out.set_string_attribute("/meta", "empty", "");
    out.finish();
  }
  ResultsReader in(path);
  CHECK(in.read_int_attribute("/", "schema_version") == io::kSchemaVersion);
  CHECK(in.read_string_attribute("/", "vramsim_version") == io::vramsim_version());
  CHECK(in.read_string_attribute("/", "command") == "vramsim serve s.toml --out run.h5");
  CHECK(in.read_string_attribute("/", "scenario_text") ==
        "[trace]\nkind = \"poisson\"  # ünïcödé\n");
  CHECK(in.read_int_attribute("/", "seed") == -3);
  CHECK(in.read_string_attribute("/", "inputs") == R"({"rate_per_s": 2.5})");
  CHECK(in.read_string_attribute("/", "calibration_source") ==
        "topologies/h100/calibration/x.csv");
  CHECK(in.read_string_attribute("/", "created_by") == "vramsim serve");
  CHECK(in.list_attributes("/") ==
        std::vector<std::string>{"calibration_source", "command", "created_by", "inputs",
                                 "scenario_text", "schema_version", "seed", "vramsim_version"});
  CHECK(in.read_string_attribute("meta", "status") == "ok");
  CHECK(in.read_int_attribute("/meta", "num_devices") ==
        std::numeric_limits<std::int64_t>::max());
  CHECK(in.read_double_attribute("/meta", "gpu_memory_utilization") == 0.85);
  CHECK(in.read_double_attribute("/", "seed") == -3.0);  // integers convert to double
  CHECK(in.read_string_attribute("/meta", "empty").empty());
  CHECK(in.has_attribute("/meta", "status"));
  CHECK_FALSE(in.has_attribute("/meta", "nope"));
}

TEST_CASE("int64, double and string columns round-trip with their units", "[io][reader]") {
  ScratchDir dir("columns");
  const fs::path path = dir / "run.h5";
  const std::vector<std::int64_t> bytes{0, 1, -1, std::numeric_limits<std::int64_t>::min(),
                                        std::numeric_limits<std::int64_t>::max()};
  const std::vector<double> seconds{0.0, 1e-9, -2.5, 1e300};
  const std::vector<std::string> words{"prefill", "", "décodé", "a much longer string"};
  const std::vector<std::int64_t> none;
  {
    ResultsWriter out(path);
    out.write_column("/c", Column::int64("weights_bytes", io::kUnitsBytes, bytes));
    out.write_column("/c", Column::int64("ttft", io::kUnitsNanoseconds, bytes));
    out.write_column("/c", Column::float64("e2e", io::kUnitsSeconds, seconds));
    out.write_column("/c", Column::float64("flops", io::kUnitsFlop, seconds));
    out.write_column("/c", Column::string("vlen", words));
    out.write_column("/c", Column::string("fixed", words, StringLayout::kFixed));
    out.write_column("/c", Column::int64("empty", io::kUnitsCount, none));
    out.finish();
  }
  ResultsReader in(path);
  CHECK(in.read_int_column("/c/weights_bytes") == bytes);
  CHECK(in.read_units("/c/weights_bytes") == "B");
  CHECK(in.read_units("/c/ttft") == "ns");
  CHECK(in.read_double_column("/c/e2e") == seconds);
  CHECK(in.read_units("/c/e2e") == "s");
  CHECK(in.read_units("/c/flops") == "FLOP");
  CHECK(in.read_string_column("/c/vlen") == words);
  CHECK(in.read_string_column("/c/fixed") == words);
  CHECK(in.read_units("/c/vlen").empty());
  CHECK(in.read_units("/c/fixed").empty());
  CHECK(in.read_int_column("/c/empty").empty());
  CHECK(in.read_units("/c/empty") == "1");
  CHECK(in.column_type("/c/weights_bytes") == ColumnType::kInt64);
  CHECK(in.column_type("/c/e2e") == ColumnType::kFloat64);
  CHECK(in.column_type("/c/fixed") == ColumnType::kString);
  CHECK(in.num_rows("/c/vlen") == 4);
  CHECK(in.read_double_column("/c/weights_bytes").at(2) == -1.0);  // int converts to double
}

TEST_CASE("a table keeps its column order while HDF5 lists datasets alphabetically",
          "[io][reader]") {
  ScratchDir dir("table");
  const fs::path path = dir / "run.h5";
  const std::vector<std::int64_t> device{0, 1};
  const std::vector<std::int64_t> weights{100, 200};
  const std::vector<double> concurrency{1.5, 2.0};
  {
    ResultsWriter out(path);
    out.write_table("/budget", {Column::int64("device_index", io::kUnitsCount, device),
                                Column::int64("weights_bytes", io::kUnitsBytes, weights),
                                Column::float64("max_concurrency", io::kUnitsCount, concurrency)});
    out.create_group("/meta/empty/nested");
    out.finish();
  }
  ResultsReader in(path);
  CHECK(in.table_columns("/budget") ==
        std::vector<std::string>{"device_index", "weights_bytes", "max_concurrency"});
  CHECK(in.list_datasets("/budget") ==
        std::vector<std::string>{"device_index", "max_concurrency", "weights_bytes"});
  CHECK(in.list_groups("/") == std::vector<std::string>{"budget", "meta"});
  CHECK(in.list_groups("/meta") == std::vector<std::string>{"empty"});
  CHECK(in.list_datasets("/") == std::vector<std::string>{});
  CHECK(in.has_object("/meta/empty/nested"));
  CHECK_FALSE(in.has_object("/meta/other"));
}

TEST_CASE("reading a missing dataset or attribute throws a ConfigError naming file and path",
          "[io][reader][errors]") {
  ScratchDir dir("missing_obj");
  const fs::path path = dir / "run.h5";
  {
    ResultsWriter out(path);
    const std::vector<std::int64_t> v{1};
    out.write_column("/budget", Column::int64("fits", io::kUnitsCount, v));
    out.finish();
  }
  ResultsReader in(path);
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(in.read_int_column("/budget/nope"),
                    Contains(path.string()) && Contains("/budget/nope"));
  CHECK_THROWS_WITH(in.read_string_attribute("/budget", "nope"), Contains("/budget@nope"));
  CHECK_THROWS_AS(in.read_string_column("/budget/fits"), ConfigError);
  CHECK_THROWS_AS(in.read_int_column("/budget"), ConfigError);
  CHECK_THROWS_AS(in.read_string_attribute("/", "schema_version"), ConfigError);
}

TEST_CASE("opening a missing or non-HDF5 file throws a ConfigError naming it",
          "[io][reader][errors]") {
  ScratchDir dir("not_hdf5");
  CHECK_THROWS_WITH(ResultsReader(dir / "absent.h5"),
                    Catch::Matchers::Contains((dir / "absent.h5").string()));
  std::ofstream(dir / "text.h5") << "not an HDF5 file\n";
  CHECK_THROWS_AS(ResultsReader(dir / "text.h5"), ConfigError);
}

TEST_CASE("a string holding a NUL byte is refused with a ConfigError", "[io][errors]") {
  ScratchDir dir("nul");
  ResultsWriter out(dir / "run.h5");
  CHECK_THROWS_AS(out.set_string_attribute("/", "scenario_text", std::string("a\0b", 3)),
                  ConfigError);
  const std::vector<std::string> bad{std::string("x\0y", 3)};
  CHECK_THROWS_AS(out.write_column("/t", Column::string("s", bad, StringLayout::kFixed)),
                  ConfigError);
}
