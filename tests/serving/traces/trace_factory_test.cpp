#include "sim/serving/traces/trace_factory.hpp"

#include <string>

#include "sim/serving/traces/azure_conv_fit.hpp"
#include "tests/catch.hpp"
#include "tests/serving/traces/trace_test_support.hpp"

using namespace vramsim;
using namespace vramsim::serving;
using namespace vramsim::serving::testing;
using Catch::Matchers::Contains;

TEST_CASE("open_trace opens a file with its transforms", "[serving][traces]") {
  ScratchDir dir("factory");
  TraceSpec spec;
  spec.kind = TraceKind::kFile;
  spec.path = dir.write("p.csv", "arrival_s,prompt_tokens,output_tokens\n0,10,1\n1,20,2\n2,30,3\n");
  spec.transforms.time_scale = 4.0;
  auto source = open_trace(spec);
  const auto rows = drain(*source);
  CHECK(arrivals_ns(rows) == std::vector<std::int64_t>{0, 250'000'000, 500'000'000});
  CHECK(source->describe() == "CSV p.csv, 4x speed");
}

TEST_CASE("open_trace names a missing file's path", "[serving][traces]") {
  TraceSpec spec;
  spec.kind = TraceKind::kFile;
  spec.path = "/nonexistent/trace.csv";
  CHECK_THAT(config_error_of([&] { open_trace(spec); }),
             Contains("trace: cannot open trace file '/nonexistent/trace.csv'"));
  spec.path.clear();
  CHECK_THAT(config_error_of([&] { open_trace(spec); }),
             Contains("workload.path: a file trace needs a path"));
}

TEST_CASE("open_trace reports every invalid option at once", "[serving][traces]") {
  TraceSpec spec;  // synthetic by default
  spec.synthetic.arrivals.rate_per_s = -1;
  spec.synthetic.num_requests = 10;
  spec.transforms.max_requests = -5;
  try {
    open_trace(spec);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    REQUIRE(e.report().problems().size() == 2);
    CHECK(format_problem(e.report().problems()[0]) ==
          "workload.rate: must be > 0 requests/s, got -1");
    CHECK(format_problem(e.report().problems()[1]) == "workload.max_requests: must be > 0, got -5");
  }
}

TEST_CASE("open_trace builds the synthetic Azure conversation workload", "[serving][traces]") {
  auto source = open_trace(azure_conv_synthetic(100, 1));
  CHECK(drain(*source).size() == 100);
  CHECK(source->describe() ==
        "synthetic: gamma 5.530136 req/s cv 1.09417, prompt "
        "lognormal:mu=6.927557906278317,sigma=0.498068,min=2,max=14050, output "
        "lognormal:mu=4.859812404361672,sigma=1.071707,min=7,max=1000, 100 requests, seed 1");
  CHECK(trace_kind_from_string("file") == TraceKind::kFile);
  CHECK(trace_kind_from_string(to_string(TraceKind::kSynthetic)) == TraceKind::kSynthetic);
}
