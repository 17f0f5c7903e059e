// Always-on invariant checks (SimGrid's xbt_assert). A failed check is a bug in vramsim, never
// a user's mistake: user input goes through ValidationReport / ConfigError (error.hpp).
//
//   VRAMSIM_CHECK(cond, fmt, args...)   always compiled; prints file:line and aborts.
//   VRAMSIM_DCHECK(cond, fmt, args...)  for O(n) checks; compiled out when NDEBUG is set.
//   VRAMSIM_UNREACHABLE(msg)            after an exhaustive switch over an enum.
#pragma once

#include <fmt/format.h>

#include <string>

namespace vramsim::detail {
[[noreturn]] void check_failed(const char* file, int line, const char* expr,
                               const std::string& message);
}  // namespace vramsim::detail

#define VRAMSIM_CHECK(cond, ...)                                                    \
  do {                                                                              \
    if (!(cond)) [[unlikely]] {                                                     \
      ::vramsim::detail::check_failed(__FILE__, __LINE__, #cond,                    \
                                      ::fmt::format(__VA_ARGS__));                  \
    }                                                                               \
  } while (false)

#ifdef NDEBUG
#define VRAMSIM_DCHECK(cond, ...) \
  do {                            \
  } while (false)
#else
#define VRAMSIM_DCHECK(cond, ...) VRAMSIM_CHECK(cond, __VA_ARGS__)
#endif

#define VRAMSIM_UNREACHABLE(msg) \
  ::vramsim::detail::check_failed(__FILE__, __LINE__, "unreachable", (msg))
