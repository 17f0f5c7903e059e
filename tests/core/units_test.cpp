#include "sim/core/units.hpp"

#include "tests/catch.hpp"

using namespace vramsim;

TEST_CASE("binary and decimal prefixes stay apart", "[core][units]") {
  CHECK(GiB(1).count() == 1073741824);
  CHECK(GB(1).count() == 1000000000);
  CHECK(GiB(80) != GB(80));
  CHECK(parse_bytes("80GiB") == GiB(80));
  CHECK(parse_bytes("80 GB") == GB(80));
  CHECK(parse_bytes("512MiB") == MiB(512));
  CHECK(parse_bytes("1024B") == KiB(1));
  // 79.2 GiB rounds once to whole bytes.
  CHECK(parse_bytes("79.2GiB").count() == 85040352461);
}

TEST_CASE("a size without a unit or with an unknown unit is refused with a hint", "[core][units]") {
  CHECK_THROWS_AS(parse_bytes("80"), UnitError);
  CHECK_THROWS_WITH(parse_bytes("80"), Catch::Contains("has no unit"));
  CHECK_THROWS_WITH(parse_bytes("80gb"), Catch::Contains("case-sensitive"));
  CHECK_THROWS_WITH(parse_bytes("80Gb"), Catch::Contains("bits"));
  CHECK_THROWS_WITH(parse_bytes("-1GiB"), Catch::Contains("negative"));
  CHECK_THROWS_WITH(parse_bytes("nanGiB"), Catch::Contains("finite"));
  CHECK_THROWS_AS(parse_bytes(""), UnitError);
}

TEST_CASE("bandwidths keep bits apart from bytes", "[core][units]") {
  CHECK(parse_bandwidth("450GB/s").bytes_per_second() == 450e9);
  CHECK(parse_bandwidth("400Gbps").bytes_per_second() == 50e9);
  CHECK(parse_bandwidth("400 Gb/s").bytes_per_second() == 50e9);
  CHECK(parse_bandwidth("1GiB/s").bytes_per_second() == 1073741824.0);
  CHECK_THROWS_WITH(parse_bandwidth("450GB"), Catch::Contains("per-second"));
}

TEST_CASE("FLOP rates and durations parse with their suffixes", "[core][units]") {
  CHECK(parse_flop_rate("989TFLOPS").per_second() == Approx(989e12));
  CHECK(parse_flop_rate("1.98 PFLOPS").per_second() == Approx(1.98e15));
  CHECK(parse_flop_rate("312TFLOP/s").per_second() == Approx(312e12));
  CHECK(parse_duration("5us") == microseconds(5));
  CHECK(parse_duration("1.5ms") == microseconds(1500));
  CHECK(parse_duration("2s") == seconds(2));
  CHECK_THROWS_AS(parse_duration("5 fortnights"), UnitError);
}

TEST_CASE("only meaningful arithmetic produces durations", "[core][units]") {
  // 1 GB over 1 GB/s is one second, exactly.
  CHECK(GB(1) / GBps(1.0) == seconds(1));
  // 2e12 FLOP at 1 TFLOP/s is two seconds.
  CHECK(Flops(2e12) / TFLOPS(1.0) == seconds(2));
  const SimTime t0 = SimTime::zero() + milliseconds(3);
  const SimTime t1 = t0 + microseconds(250);
  CHECK((t1 - t0) == microseconds(250));
  CHECK(Duration::from_seconds(1.5e-9).nanoseconds() == 2);  // rounded once, to nearest
}

TEST_CASE("byte counts format in binary units for people", "[core][units]") {
  CHECK(format_bytes(GiB(15)) == "15.00 GiB");
  CHECK(format_bytes(MiB(3)) == "3.00 MiB");
  CHECK(format_bytes(Bytes(12)) == "12 B");
}
