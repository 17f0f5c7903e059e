// One-line shim: Catch2 v3 when present, else Debian 12's v2.13 single header.
#pragma once
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif
