// "Did you mean" for a mistyped flag: the command's own flags closest to what was typed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace vramsim::cli {

/// The flags of `cmd` (long "--name" and short "-n" spellings) closest to `typed` ("--flag" or
/// "--flag=value"): those within an edit distance of max(2, length / 4), nearest first, then
/// those that start with what was typed or abbreviate each of its words ("--gpu-mem-util");
/// at most three, each once.
std::vector<std::string> closest_flags(const CLI::App& cmd, std::string_view typed);

/// "unknown flag '--max-num-seq'; did you mean --max-num-seqs?" (or "; see --help for the
/// flags" when nothing is close).
std::string unknown_flag_message(const CLI::App& cmd, std::string_view typed);

/// The parsed subcommand deepest below `app` ("compare serve" → serve), or `app` itself.
const CLI::App& deepest_parsed(const CLI::App& app);

}  // namespace vramsim::cli
