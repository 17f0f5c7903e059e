#include "sim/core/check.hpp"

#include <cstdio>
#include <cstdlib>

namespace vramsim::detail {

void check_failed(const char* file, int line, const char* expr, const std::string& message) {
  std::fprintf(stderr, "vramsim: internal error at %s:%d: check `%s` failed: %s\n", file, line,
               expr, message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace vramsim::detail
