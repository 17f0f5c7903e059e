#include "sim/core/enum_table.hpp"

#include <string>

#include "sim/core/dtype.hpp"
#include "tests/catch.hpp"
#include "tests/core/enum_table_checks.hpp"

using namespace vramsim;

namespace {

enum class Fruit { kApple, kBlueBerry, kCherry };

constexpr auto kFruits = enum_table<Fruit>(
    {
        {Fruit::kApple, "apple", "round and red"},
        {Fruit::kBlueBerry, "blue-berry", "small and blue"},
        {Fruit::kCherry, "cherry", "on top"},
    },
    {{"pomme", Fruit::kApple}, {"bilberry", Fruit::kBlueBerry}});

constexpr auto kFruitsIgnoringCase = enum_table<Fruit>(
    {
        {Fruit::kApple, "apple", "round and red"},
        {Fruit::kBlueBerry, "blue-berry", "small and blue"},
        {Fruit::kCherry, "cherry", "on top"},
    },
    NameMatch::kIgnoreCase);

// The build-time guarantees: everything below is a constant expression.
static_assert(covers_every_enumerator(kFruits));
static_assert(names_are_unique(kFruits));
static_assert(name_of(kFruits, Fruit::kBlueBerry) == "blue-berry");
static_assert(parse_name(kFruits, "cherry") == Fruit::kCherry);
static_assert(parse_name(kFruits, "pomme") == Fruit::kApple);
static_assert(!parse_name(kFruits, "Cherry"));
static_assert(parse_name(kFruitsIgnoringCase, "CHERRY") == Fruit::kCherry);
static_assert(names_list<kFruits>() == "apple, blue-berry, cherry");

// A table that forgets an enumerator, or lists them out of order, or names one twice, is refused.
constexpr auto kMissingLast = enum_table<Fruit>({
    {Fruit::kApple, "apple", "a"},
    {Fruit::kBlueBerry, "blue-berry", "b"},
});
static_assert(!covers_every_enumerator(kMissingLast));
constexpr auto kOutOfOrder = enum_table<Fruit>({
    {Fruit::kApple, "apple", "a"},
    {Fruit::kCherry, "cherry", "c"},
    {Fruit::kBlueBerry, "blue-berry", "b"},
});
static_assert(!covers_every_enumerator(kOutOfOrder));
constexpr auto kTwice = enum_table<Fruit>({
    {Fruit::kApple, "apple", "a"},
    {Fruit::kBlueBerry, "apple", "b"},
    {Fruit::kCherry, "cherry", "c"},
});
static_assert(covers_every_enumerator(kTwice) && !names_are_unique(kTwice));
constexpr auto kAliasClash = enum_table<Fruit>(
    {
        {Fruit::kApple, "apple", "a"},
        {Fruit::kBlueBerry, "blue-berry", "b"},
        {Fruit::kCherry, "cherry", "c"},
    },
    {{"Apple", Fruit::kCherry}}, NameMatch::kIgnoreCase);
static_assert(!names_are_unique(kAliasClash));

// An enum with a fixed underlying type and one that does not start its rows at the first value.
enum class Small : unsigned char { kA, kB };
constexpr auto kSmall = enum_table<Small>({{Small::kA, "a", "a"}, {Small::kB, "b", "b"}});
static_assert(covers_every_enumerator(kSmall));
constexpr auto kSmallMissingFirst = enum_table<Small>({{Small::kB, "b", "b"}});
static_assert(!covers_every_enumerator(kSmallMissingFirst));

}  // namespace

TEST_CASE("an enum table names, parses and lists its enumerators", "[core][enum_table]") {
  testing::check_enum_table(kFruits);
  testing::check_enum_table(kFruitsIgnoringCase);
  CHECK(parse_name(kFruitsIgnoringCase, "Blue-Berry") == Fruit::kBlueBerry);
  CHECK(parse_name(kFruits, "Blue-Berry") == std::nullopt);
  CHECK(description_of(kFruits, Fruit::kCherry) == "on top");
}

TEST_CASE("joined names, aliases and help text", "[core][enum_table]") {
  CHECK(join_names(kFruits) == "apple, blue-berry, cherry");
  CHECK(join_names(kFruits, ", ", " or ") == "apple, blue-berry or cherry");
  CHECK(join_names(kSmall, ", ", " or ") == "a or b");
  CHECK(join_names(kFruits, " | ") == "apple | blue-berry | cherry");
  CHECK(join_names_with_aliases(kFruits) == "apple (pomme), blue-berry (bilberry), cherry");
  CHECK(help_text(kFruits) ==
        "  apple       round and red\n"
        "  blue-berry  small and blue\n"
        "  cherry      on top\n");
  CHECK(help_text(kSmall, "") == "a  a\nb  b\n");
}

TEST_CASE("DType: every name round-trips and the aliases of vLLM parse", "[core][enum_table]") {
  testing::check_enum_api(kDTypes, [](DType d) { return to_string(d); }, dtype_from_string,
                          dtype_names());
  CHECK(dtype_names() == "fp32, fp16, bf16, fp8, int8, int4");
  CHECK(dtype_from_string("half") == DType::kFp16);
  CHECK(dtype_from_string("float8_e4m3fn") == DType::kFp8);
  CHECK(dtype_from_string("FP16") == std::nullopt);  // exact, as before
}
