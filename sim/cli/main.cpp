// `vramsim`: the command line. Parses with CLI11, runs one subcommand, and maps errors to the exit
// codes of DESIGN.md: 0 success, 2 bad input (every problem printed with its file, line or
// field), 3 a run that cannot proceed. Anything else escaping is a bug: it is caught here too,
// printed as an internal error, and exits with kExitInternalError, so that no exception type
// ever ends the program through std::terminate.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <malloc.h>

#include <cstdio>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include "sim/cli/flag_suggestions.hpp"
#include "sim/cli/vllm_command.hpp"
#include "sim/core/error.hpp"

namespace {
// sysexits.h's EX_SOFTWARE: distinct from the documented 0, 2 and 3, and from 134 (an abort).
constexpr int kExitInternalError = 70;

int run_main(int argc, char** argv) {
  using namespace vramsim;
  CLI::App app{"vramsim: a simulator of GPU memory and time for LLM serving and training"};
  app.set_version_flag("--version", std::string("vramsim ") + VRAMSIM_VERSION);
  app.require_subcommand(1);

  cli::set_command_line(argc, argv);  // as typed, for the results files
  std::vector<cli::RunFn> runs;
  runs.push_back(cli::register_budget(app));
  runs.push_back(cli::register_serve(app));
  runs.push_back(cli::register_compare(app));
  runs.push_back(cli::register_capacity(app));
  runs.push_back(cli::register_bench(app));
  runs.push_back(cli::register_list(app));
  runs.push_back(cli::register_train(app));
  runs.push_back(cli::register_report(app));
  runs.push_back(cli::register_calibrate_report(app));
  runs.push_back(cli::register_sweep(app));
  runs.push_back(cli::register_plan(app));

  // A vLLM command pasted after "--" becomes the flags it means (sim/cli/vllm_command.hpp).
  std::vector<std::string> words(argv, argv + argc);
  try {
    std::optional<cli::PastedVllm> pasted = cli::translate_pasted_vllm(
        words, [&](const std::string& flag) { return cli::command_accepts(app, words, flag); });
    if (pasted) {
      if (!cli::takes_pasted_vllm(words)) {
        std::fprintf(stderr, "error: a pasted vLLM command (after --) is read by budget, serve, "
                             "compare serve and capacity serve\n");
        return kExitBadInput;
      }
      for (const std::string& note : pasted->notes) {
        std::fprintf(stderr, "note: %s\n", note.c_str());
      }
      words = std::move(pasted->argv);
    }
  } catch (const ConfigError& e) {
    for (const Problem& p : e.report().problems()) {
      std::fprintf(stderr, "error: %s\n", format_problem(p).c_str());
    }
    return kExitBadInput;
  }
  std::vector<const char*> args;
  for (const std::string& w : words) args.push_back(w.c_str());
  argc = static_cast<int>(args.size());
  const char* const* parsed_argv = args.data();

  try {
    app.parse(argc, parsed_argv);
  } catch (const CLI::ExtrasError& e) {
    // Words no option took: name each mistyped flag with the command's closest spellings.
    const CLI::App& cmd = cli::deepest_parsed(app);
    const std::vector<std::string> extras = app.remaining(true);
    if (extras.empty()) return app.exit(e) == 0 ? kExitOk : kExitBadInput;
    for (const std::string& word : extras) {
      if (word.size() > 1 && word[0] == '-') {
        std::fprintf(stderr, "error: %s\n", cli::unknown_flag_message(cmd, word).c_str());
      } else {
        std::fprintf(stderr, "error: unexpected argument '%s' (a value without its flag?)\n",
                     word.c_str());
      }
    }
    std::fprintf(stderr, "Run with --help for more information.\n");
    return kExitBadInput;
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    // CLI11 returns 0 for --help/--version; any parse problem is bad input (exit 2).
    return code == 0 ? kExitOk : kExitBadInput;
  }

  try {
    // Each command's function returns -1 unless its subcommand was the one parsed.
    for (const cli::RunFn& run : runs) {
      const int code = run();
      if (code >= 0) return code;
    }
    std::fprintf(stderr, "vramsim: no command given; see --help\n");
    return kExitBadInput;
  } catch (const ConfigError& e) {
    for (const Problem& p : e.report().problems()) {
      std::fprintf(stderr, "error: %s\n", format_problem(p).c_str());
    }
    return kExitBadInput;
  }
}

// glibc's allocator keeps what a simulation frees for the next one. NOTE: by default it maps
// every block of 128 KiB or more afresh (the KV cache's block metadata, the event heap) and
// gives freed memory back at once, so each simulation of a sweep or plan search faulted its
// pages in again: 8% of a plan-serve run went to the kernel. Peak memory is unchanged.
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();
  try {
    return run_main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "vramsim: internal error: out of memory (the run needs more memory than this "
                 "machine gave it; use a smaller trace, fewer requests or a smaller KV cache)\n");
    return kExitInternalError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vramsim: internal error: %s\n", e.what());
    return kExitInternalError;
  } catch (...) {
    std::fprintf(stderr, "vramsim: internal error: an unknown exception\n");
    return kExitInternalError;
  }
}
