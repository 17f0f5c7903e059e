// Issue 18: `sweep --resume` reads back journal records of the wrong shape (strings, nulls,
// wrong-typed metrics, duplicate indices). Each is refused, named by journal file and line, and
// its point runs again; only records of the shape record_to_json writes are kept.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "sim/run/sweep_output.hpp"
#include "sim/run/sweep_point.hpp"
#include "sim/run/sweep_run.hpp"
#include "tests/catch.hpp"

namespace {

using vramsim::run::PointRecord;

std::filesystem::path journal_dir() {
  const auto d = std::filesystem::temp_directory_path() / "vramsim_run_test" / "journal";
  std::filesystem::create_directories(d);
  return d;
}

/// A well-formed ok record of a serve point.
nlohmann::ordered_json good_record(std::int64_t index = 0) {
  nlohmann::ordered_json j;
  j["index"] = index;
  j["status"] = "ok";
  j["reason"] = "";
  j["axis_values"] = nlohmann::ordered_json::array({"h100-sxm"});
  j["scenario_text"] = "seed = 3\n";
  j["result"] = {{"num_requests", 60}, {"num_finished", 60}, {"ttft_mean_s", 0.05}};
  return j;
}

template <typename F>
std::string with(F edit) {
  nlohmann::ordered_json j = good_record();
  edit(j);
  return j.dump();
}

}  // namespace

TEST_CASE("journal lines of the wrong shape are refused, each with what is wrong",
          "[run][sweep][resume]") {
  using J = nlohmann::ordered_json;
  struct Case {
    std::string name;
    std::string line;
    std::string why;  // a substring of record_from_json's explanation
  };
  const std::vector<Case> cases = {
      {"not JSON", "{\"index\": 0, \"sta", "not a JSON object"},
      {"an array", "[1, 2]", "not a JSON object"},
      {"a string", "\"ok\"", "not a JSON object"},
      {"index missing", with([](J& j) { j.erase("index"); }), "has no \"index\""},
      {"index a string", with([](J& j) { j["index"] = "0"; }), "\"index\" must be"},
      {"index null", with([](J& j) { j["index"] = nullptr; }), "\"index\" must be"},
      {"index fractional", with([](J& j) { j["index"] = 1.5; }), "\"index\" must be"},
      {"index a boolean", with([](J& j) { j["index"] = true; }), "\"index\" must be"},
      {"index negative", with([](J& j) { j["index"] = -1; }), "non-negative integer, got -1"},
      {"index past int64",
       with([](J& j) { j["index"] = std::numeric_limits<std::uint64_t>::max(); }),
       "\"index\" must be"},
      {"status unknown", with([](J& j) { j["status"] = "done"; }), "\"status\" must be"},
      {"status null", with([](J& j) { j["status"] = nullptr; }), "\"status\" must be"},
      {"reason null", with([](J& j) { j["reason"] = nullptr; }), "\"reason\" must be a string"},
      {"scenario a number", with([](J& j) { j["scenario_text"] = 3; }),
       "\"scenario_text\" must be a string"},
      {"axis values a string", with([](J& j) { j["axis_values"] = "h100-sxm"; }),
       "\"axis_values\" must be an array"},
      {"axis value a number", with([](J& j) { j["axis_values"] = J::array({1}); }),
       "\"axis_values\" must hold strings"},
      {"ok with a null result", with([](J& j) { j["result"] = nullptr; }),
       "status \"ok\" must be an object"},
      {"ok with a string result", with([](J& j) { j["result"] = "{}"; }),
       "status \"ok\" must be an object"},
      {"error with a result", with([](J& j) {
         j["status"] = "error";
         j["reason"] = "bad";
       }),
       "status \"error\" must be null"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name, c.line);
    std::string why;
    CHECK_FALSE(vramsim::run::record_from_json(c.line, &why).has_value());
    CHECK_THAT(why, Catch::Contains(c.why));
  }
  // The shape record_to_json writes comes back whole.
  const std::optional<PointRecord> r = vramsim::run::record_from_json(good_record(7).dump());
  REQUIRE(r.has_value());
  CHECK(r->index == 7);
  CHECK(vramsim::run::record_to_json(*r) == good_record(7).dump());
}

TEST_CASE("a result whose declared metrics have the wrong type is not reused",
          "[run][sweep][resume]") {
  using vramsim::io::SweepKind;
  struct Case {
    std::string name;
    nlohmann::ordered_json result;
    std::string problem;  // "" when the result is fine
  };
  const std::vector<Case> cases = {
      {"numbers where numbers belong", {{"num_finished", 60}, {"ttft_mean_s", 0.05}}, ""},
      {"an integer for a float metric", {{"ttft_mean_s", 1}}, ""},
      {"null (a NaN written out)", {{"ttft_mean_s", nullptr}}, ""},
      {"an undeclared key of any type", {{"notes", {1, 2}}}, ""},
      {"a string for a float metric", {{"ttft_mean_s", "0.05"}},
       "\"ttft_mean_s\" must be a number"},
      {"an object for a float metric", {{"ttft_mean_s", {{"v", 1}}}}, "must be a number"},
      {"a float for a count", {{"num_finished", 59.5}}, "\"num_finished\" must be an integer"},
      {"a string for a count", {{"num_finished", "60"}}, "\"num_finished\" must be an integer"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    PointRecord r;
    r.status = "ok";
    r.result = c.result;
    const std::string problem = vramsim::run::result_shape_problem(SweepKind::kServe, r);
    if (c.problem.empty()) {
      CHECK(problem.empty());
    } else {
      CHECK_THAT(problem, Catch::Contains(c.problem));
    }
  }
  PointRecord infeasible;
  infeasible.status = "infeasible";
  infeasible.result = nlohmann::ordered_json::object();
  CHECK_THAT(vramsim::run::result_shape_problem(SweepKind::kServe, infeasible),
             Catch::Contains("must hold its budget"));
  infeasible.result["budget"] = {{"fits", false}};
  CHECK(vramsim::run::result_shape_problem(SweepKind::kServe, infeasible).empty());
}

TEST_CASE("previous_records names each refused journal line and drops conflicting duplicates",
          "[run][sweep][resume]") {
  const auto out = journal_dir() / "dups.h5";
  std::filesystem::remove(out);
  const auto journal = vramsim::run::journal_path(out);
  nlohmann::ordered_json other = good_record(1);
  other["result"]["num_finished"] = 59;
  std::ofstream(journal) << good_record(0).dump() << "\n"           // line 1: kept
                         << good_record(1).dump() << "\n"           // line 2: conflicts with 4
                         << "{\"index\": \"2\"}\n"                  // line 3: wrong shape
                         << other.dump() << "\n"                    // line 4
                         << good_record(0).dump() << "\n"           // line 5: the same again
                         << "{\"index\": 5, \"sta";                 // torn: no warning
  std::vector<std::string> warnings;
  const std::vector<PointRecord> records = vramsim::run::previous_records(
      out, [&](const std::string& w) { warnings.push_back(w); });
  REQUIRE(records.size() == 1);
  CHECK(records[0].index == 0);
  REQUIRE(warnings.size() == 2);
  CHECK_THAT(warnings[0], Catch::Contains(journal.string() + ":3:") &&
                              Catch::Contains("has no \"status\""));
  CHECK_THAT(warnings[1], Catch::Contains(journal.string() + ":4: point 1") &&
                              Catch::Contains("already journaled at line 2"));
}
