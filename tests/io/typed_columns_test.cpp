// The naming rule and typed records (sim/io/typed_columns.hpp): a value's units come from its
// C++ type, a name is checked against them, and a record renders the same fields to JSON and to
// a one-row table; the reader says which schema version a file follows.
#include "sim/io/typed_columns.hpp"

#include "sim/core/error.hpp"
#include "sim/io/results_reader.hpp"
#include "tests/catch.hpp"
#include "tests/io/io_test_support.hpp"

#include <string>
#include <vector>

namespace fs = std::filesystem;
using vramsim::Bytes;
using vramsim::ConfigError;
using vramsim::Duration;
using vramsim::Flops;
using vramsim::io::ColumnType;
using vramsim::io::name_fits;
using vramsim::io::name_fits_units;
using vramsim::io::Quantity;
using vramsim::io::ResultsReader;
using vramsim::io::ResultsWriter;
using vramsim::io::TypedRecord;
using vramsim::io::testing::ScratchDir;
namespace io = vramsim::io;

TEST_CASE("the naming rule admits a name only with its unit's suffix", "[io][naming]") {
  CHECK(name_fits("weights_bytes", Quantity::kBytes));
  CHECK(name_fits("kv_bytes_per_token", Quantity::kBytes));
  CHECK_FALSE(name_fits("weights", Quantity::kBytes));
  CHECK_FALSE(name_fits("bw_bytes_per_s", Quantity::kBytes));  // a bandwidth, not bytes
  CHECK(name_fits("step_time_s", Quantity::kSeconds));
  CHECK_FALSE(name_fits("step_time", Quantity::kSeconds));
  CHECK_FALSE(name_fits("tokens_per_s", Quantity::kSeconds));
  CHECK(name_fits("arrival_ns", Quantity::kNanoseconds));
  CHECK_FALSE(name_fits("arrival", Quantity::kNanoseconds));
  CHECK_FALSE(name_fits("arrival_s", Quantity::kNanoseconds));
  CHECK(name_fits("tokens_per_s", Quantity::kRate));
  CHECK_FALSE(name_fits("tokens", Quantity::kRate));
  CHECK(name_fits("model_flops_per_step", Quantity::kFlop));
  CHECK(name_fits("num_requests", Quantity::kCount));
  CHECK(name_fits("mfu", Quantity::kRatio));
  CHECK(name_fits("fits", Quantity::kFlag));
  // A count or ratio must not look like a quantity with a unit.
  CHECK_FALSE(name_fits("duration_s", Quantity::kRatio));
  CHECK_FALSE(name_fits("peak_bytes", Quantity::kCount));
  CHECK_FALSE(name_fits("time_ns", Quantity::kCount));
  CHECK(name_fits("model", Quantity::kText));
}

TEST_CASE("a dataset's units fit its name only as the rule says", "[io][naming]") {
  CHECK(name_fits_units("ttft_p99_s", ColumnType::kFloat64, "s"));
  CHECK_FALSE(name_fits_units("ttft_p99_s", ColumnType::kFloat64, "1"));
  CHECK(name_fits_units("arrival_ns", ColumnType::kInt64, "ns"));
  CHECK_FALSE(name_fits_units("arrival", ColumnType::kInt64, "ns"));  // schema 1's name
  CHECK_FALSE(name_fits_units("arrival_ns", ColumnType::kFloat64, "ns"));
  CHECK(name_fits_units("kv_cache_bytes", ColumnType::kInt64, "B"));
  CHECK(name_fits_units("max_concurrency", ColumnType::kFloat64, "1"));
  CHECK(name_fits_units("num_steps", ColumnType::kInt64, "1"));
  CHECK_FALSE(name_fits_units("algbw", ColumnType::kFloat64, "B/s"));  // not in the rule
}

// A plain double does not say what it is: a record refuses it at compile time, so no field can
// be declared with a unit other than its type's.
template <class V>
concept Addable = requires(TypedRecord r, V v) { r.add(std::string("x_s"), v); };
static_assert(!Addable<double>);
static_assert(!Addable<float>);
static_assert(Addable<Duration>);
static_assert(Addable<io::Seconds>);

TEST_CASE("a typed record takes each field's units from its type", "[io][naming]") {
  TypedRecord rec;
  rec.add("num_requests", 7)
      .add("weights_bytes", Bytes(1 << 20))
      .add("ttft_p99_s", Duration::from_seconds(0.25))
      .add("ttft_mean_s", io::Seconds{0.125})
      .add("throughput_requests_per_s", io::PerSecond{3.5})
      .add("model_flops_per_step", Flops(2e12))
      .add("mfu", io::Ratio{0.4})
      .add("fits", true)
      .add("model", "llama");
  const io::FieldSchema expected = {{"num_requests", Quantity::kCount},
                                    {"weights_bytes", Quantity::kBytes},
                                    {"ttft_p99_s", Quantity::kSeconds},
                                    {"ttft_mean_s", Quantity::kSeconds},
                                    {"throughput_requests_per_s", Quantity::kRate},
                                    {"model_flops_per_step", Quantity::kFlop},
                                    {"mfu", Quantity::kRatio},
                                    {"fits", Quantity::kFlag},
                                    {"model", Quantity::kText}};
  CHECK(rec.schema() == expected);
  CHECK(io::quantity_in(rec.schema(), "ttft_p99_s") == Quantity::kSeconds);
  CHECK_FALSE(io::quantity_in(rec.schema(), "ttft_p99").has_value());

  const nlohmann::ordered_json j = rec.to_json();
  CHECK(j.dump() ==
        R"({"num_requests":7,"weights_bytes":1048576,"ttft_p99_s":0.25,"ttft_mean_s":0.125,)"
        R"("throughput_requests_per_s":3.5,"model_flops_per_step":2000000000000.0,"mfu":0.4,)"
        R"("fits":true,"model":"llama"})");

  ScratchDir dir("typed-record");
  const fs::path path = dir / "rec.h5";
  {
    ResultsWriter w(path);
    rec.write(w, "/summary");
    std::vector<TypedRecord> rows = {rec, rec.zeroed()};
    TypedRecord::write_rows(w, "/rows", rows);
    w.finish();
  }
  const ResultsReader in(path);
  CHECK(in.table_columns("/summary") ==
        std::vector<std::string>{"num_requests", "weights_bytes", "ttft_p99_s", "ttft_mean_s",
                                 "throughput_requests_per_s", "model_flops_per_step", "mfu",
                                 "fits", "model"});
  CHECK(in.read_units("/summary/num_requests") == "1");
  CHECK(in.read_units("/summary/weights_bytes") == "B");
  CHECK(in.column_type("/summary/weights_bytes") == ColumnType::kInt64);
  CHECK(in.read_units("/summary/ttft_p99_s") == "s");
  CHECK(in.column_type("/summary/ttft_p99_s") == ColumnType::kFloat64);
  CHECK(in.read_units("/summary/throughput_requests_per_s") == "1/s");
  CHECK(in.read_units("/summary/model_flops_per_step") == "FLOP");
  CHECK(in.read_units("/summary/fits") == "1");
  CHECK(in.read_units("/summary/model").empty());
  CHECK(in.read_double_column("/summary/ttft_p99_s") == std::vector<double>{0.25});
  CHECK(in.read_int_column("/rows/weights_bytes") == std::vector<std::int64_t>{1 << 20, 0});
  CHECK(in.read_string_column("/rows/model") == std::vector<std::string>{"llama", ""});
  CHECK(in.read_int_column("/rows/fits") == std::vector<std::int64_t>{1, 0});
}

TEST_CASE("copy takes a field with its quantity from another record", "[io][naming]") {
  TypedRecord from;
  from.add("ttft_p50_s", Duration::from_seconds(1.5)).add("num_preemptions", 2);
  TypedRecord to;
  to.add("name", "TP=2").copy(from, "ttft_p50_s");
  CHECK(to.schema() == io::FieldSchema{{"name", Quantity::kText},
                                       {"ttft_p50_s", Quantity::kSeconds}});
}

TEST_CASE("the reader tells a file of an older schema from a current one", "[io][reader]") {
  ScratchDir dir("schema");
  const fs::path current = dir / "current.h5";
  {
    ResultsWriter w(current);
    w.finish();
  }
  const ResultsReader in(current);
  CHECK(in.schema_version() == io::kSchemaVersion);
  CHECK_NOTHROW(in.require_current_schema());

  const fs::path old = dir / "old.h5";
  {
    ResultsWriter w(old);
    w.set_int_attribute("/", "schema_version", 1);  // as a file of schema 1 says
    w.finish();
  }
  const ResultsReader older(old);
  CHECK(older.schema_version() == 1);
  try {
    older.require_current_schema();
    FAIL("an older file was accepted");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.find("older vramsim") != std::string::npos);
    CHECK(what.find("schema_version 1") != std::string::npos);
    CHECK(what.find("arrival_ns") != std::string::npos);
  }
}
