// End-to-end tests of `vramsim serve --max-concurrency` (closed-loop clients as
// `vllm bench serve --max-concurrency N` drives a server): a trace's lengths taken in order with
// its arrival times ignored, vLLM's throughput fields, and bad input named by its flag.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/catch.hpp"
#include "tests/cli/cli_test_support.hpp"

using vramsim::testing::run;
using vramsim::testing::Run;
using vramsim::testing::temp_dir;

namespace {

const std::string kEngine = "serve --model meta-llama/Llama-3.1-8B --gpu h100-sxm ";

}  // namespace

TEST_CASE("closed-loop clients over a trace take its lengths in order and ignore its arrivals",
          "[cli][serve][closed-loop]") {
  // Arrivals an hour apart: replayed open loop this takes three hours; closed loop it does not.
  const auto trace = temp_dir() / "closed_loop_trace.csv";
  std::ofstream(trace) << "arrival_s,prompt_tokens,output_tokens\n"
                          "0,300,20\n3600,700,40\n7200,100,10\n";
  const Run r = run(kEngine + "--trace " + trace.string() +
                    " --max-concurrency 1 --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["num_finished"] == 3);
  CHECK(j["num_prompt_tokens"] == 1100);
  CHECK(j["num_output_tokens"] == 70);
  CHECK(j["duration_s"].get<double>() < 10.0);
  CHECK(j["peak_requests_in_system"] == 1);
  CHECK(j["throughput_total_tokens_per_s"].get<double>() ==
        Approx(1170.0 / j["duration_s"].get<double>()));
  const Run table = run(kEngine + "--trace " + trace.string() + " --max-concurrency 1");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("the workload's arrival times are not used") != std::string::npos);
  CHECK(table.out.find("total tokens/s") != std::string::npos);
}

TEST_CASE("a trace's arrival times are kept under the client cap with --trace-arrivals",
          "[cli][serve][closed-loop]") {
  const auto trace = temp_dir() / "closed_loop_timed_trace.csv";
  std::ofstream(trace) << "arrival_s,prompt_tokens,output_tokens\n"
                          "0,300,20\n3600,700,40\n7200,100,10\n";
  const Run r = run(kEngine + "--trace " + trace.string() +
                    " --max-concurrency 1 --trace-arrivals --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["num_finished"] == 3);
  CHECK(j["duration_s"].get<double>() > 7200.0);
  CHECK(j["client_wait_p99_s"].get<double>() == 0.0);  // an hour apart: nobody waits
  const Run table = run(kEngine + "--trace " + trace.string() +
                        " --max-concurrency 1 --trace-arrivals");
  CHECK(table.out.find("the arrival stream waits for a free client") != std::string::npos);

  // A rate does not apply to a trace, closed loop or not; --trace-arrivals needs both a trace
  // and clients.
  const Run rate = run(kEngine + "--trace " + trace.string() + " --max-concurrency 1 --rate 2");
  CHECK(rate.exit_code == 2);
  CHECK(rate.out.find("--rate") != std::string::npos);
  const Run open = run(kEngine + "--trace " + trace.string() + " --trace-arrivals");
  CHECK(open.exit_code == 2);
  CHECK(open.out.find("--trace-arrivals") != std::string::npos);
}

TEST_CASE("serve --max-concurrency refuses bad input naming the flag", "[cli][serve][closed-loop]") {
  const Run negative = run(kEngine + "--max-concurrency -2");
  CHECK(negative.exit_code == 2);
  CHECK(negative.out.find("--max-concurrency") != std::string::npos);
  const Run no_lengths = run(kEngine + "--max-concurrency 4 --synthetic poisson --rate 2");
  CHECK(no_lengths.exit_code == 2);
  CHECK(no_lengths.out.find("--prompt-tokens") != std::string::npos);
  CHECK(no_lengths.out.find("--output-tokens") != std::string::npos);
  const Run no_requests = run(kEngine + "--max-concurrency 4 --num-requests 0 "
                              "--prompt-tokens fixed:64 --output-tokens fixed:8");
  CHECK(no_requests.exit_code == 2);
  CHECK(no_requests.out.find("--num-requests") != std::string::npos);
}

TEST_CASE("capacity serve --max-concurrency-search answers the most clients meeting the SLO",
          "[cli][capacity][closed-loop]") {
  const std::string base =
      "capacity serve --model meta-llama/Llama-3.2-1B --gpu h100-sxm --max-model-len 4096 "
      "--max-concurrency-search --num-requests 48 --prompt-tokens fixed:512 "
      "--output-tokens fixed:32 --max-concurrency-cap 16 ";
  const Run r = run(base + "--slo-ttft-p99 1000s --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["axis"] == "max_concurrency");
  CHECK(j["max_concurrency"] == 16);  // an SLO nothing misses: the cap
  CHECK(j["runs"].size() == 5);       // 1, 2, 4, 8, 16 clients
  CHECK(j["runs"][4]["max_concurrency"] == 16);
  CHECK(j["max_rate_requests_per_s"] == 0.0);
  const Run table = run(base + "--slo-ttft-p99 1000s");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("Largest client count meeting the SLOs: 16") != std::string::npos);

  const Run given = run(base + "--slo-ttft-p99 1s --max-concurrency 4");
  CHECK(given.exit_code == 2);
  CHECK(given.out.find("--max-concurrency-search") != std::string::npos);
  const Run no_lengths =
      run("capacity serve --model meta-llama/Llama-3.2-1B --gpu h100-sxm "
          "--max-concurrency-search --synthetic poisson --rate 2 --slo-ttft-p99 1s");
  CHECK(no_lengths.exit_code == 2);
  CHECK(no_lengths.out.find("--prompt-tokens") != std::string::npos);
  const Run bad_cap = run(base + "--slo-ttft-p99 1s --max-concurrency-cap 0");
  CHECK(bad_cap.exit_code == 2);
  CHECK(bad_cap.out.find("--max-concurrency-cap") != std::string::npos);
}
