// A vLLM command pasted after "--": `vramsim budget --gpu h100-sxm -- vllm serve MODEL
// --tensor-parallel-size 2 --max-model-len 32k ...` reads as the vramsim flags it means.
//
// The launcher is found among the words after "--": `vllm serve` (or a path ending in /vllm),
// `python -m vllm.entrypoints.openai.api_server`, or the `vllm/vllm-openai` container image of a
// `docker run` line; what comes before it (environment assignments, docker's own flags) is not
// read. A single quoted word holding the whole command is split as a shell would.
//
// Every flag of vLLM's `serve` (vllm/engine/arg_utils.py EngineArgs.add_cli_args and the
// OpenAI server's frontend arguments, as of vLLM 0.19) is in one table, as argparse reads it
// (FlexibleArgumentParser: "--max_model_len" is "--max-model-len"; "--flag=value"; the
// "--no-flag" form of a boolean), and is one of:
//   mapped      to the vramsim flag of the same meaning (values as vLLM takes them; GiB sizes
//               get their unit);
//   default     accepted at vLLM's default value(s), refused otherwise (not modelled);
//   refused     it changes memory or time in a way vramsim does not model: an error naming it;
//   ignored     it changes neither (network, logging, tokenizer, API): named once in a note;
//   approximate it changes time or the CUDA-graph estimate only, which vramsim answers with
//               vLLM's default: named once in a note.
// A flag not in the table is an error with the closest vLLM spellings.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace vramsim::cli {

struct PastedVllm {
  /// The command line for vramsim: the words before "--", then the translated flags (the user's
  /// own vramsim flags come last, so that they override the pasted command's).
  std::vector<std::string> argv;
  /// One line each, for stderr: what the pasted command was read as, and the flags that were
  /// ignored or approximated.
  std::vector<std::string> notes;
};

/// Whether the command taking the flags (budget, serve, compare serve, capacity serve) has
/// `flag` ("--swap-space"); a mapped flag it lacks is named among the ignored ones.
using AcceptsFlag = std::function<bool(const std::string& flag)>;

/// nullopt when `argv` holds no vLLM command after "--" (argv is parsed as it is). Throws
/// ConfigError (field "vllm command") naming each word it cannot read.
std::optional<PastedVllm> translate_pasted_vllm(const std::vector<std::string>& argv,
                                                const AcceptsFlag& accepts);

/// Whether `argv` runs a command that reads a pasted vLLM command: budget, serve, compare
/// serve, capacity serve.
bool takes_pasted_vllm(const std::vector<std::string>& argv);
/// Whether that command of `app` has the option `flag`.
bool command_accepts(const CLI::App& app, const std::vector<std::string>& argv,
                     const std::string& flag);

}  // namespace vramsim::cli
