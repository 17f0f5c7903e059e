// The names of sim/model's enums come from one table each (sim/core/enum_table.hpp).
#include <string>

#include "sim/core/error.hpp"
#include "sim/model/model_spec.hpp"
#include "sim/model/weight_format.hpp"
#include "tests/catch.hpp"
#include "tests/core/enum_table_checks.hpp"

using namespace vramsim;
using namespace vramsim::model;

TEST_CASE("ModelFamily names are the Hugging Face model_types", "[model][enum_table]") {
  testing::check_enum_table(kModelFamilies);
  for (const auto& r : kModelFamilies.rows) CHECK(to_string(r.value) == r.name);
  CHECK(to_string(ModelFamily::kQwen3Moe) == "qwen3_moe");
}

TEST_CASE("QuantMethod: names, vLLM's kernel aliases and the error list", "[model][enum_table]") {
  testing::check_enum_table(kQuantMethods);
  for (const auto& r : kQuantMethods.rows) {
    CHECK(to_string(r.value) == r.name);
    CHECK(make_weight_format(DType::kBf16, r.name).quantization == r.value);
  }
  for (const auto& a : kQuantMethods.aliases) {
    CHECK(make_weight_format(DType::kBf16, a.name).quantization == a.value);
  }
  CHECK(make_weight_format(DType::kBf16, "").quantization == QuantMethod::kNone);
  CHECK(quantization_names() ==
        "none, fp8, int8 (w8a8), awq (awq_marlin), gptq (gptq_marlin), mxfp4, bitsandbytes, "
        "modelopt, modelopt_fp4");
  try {
    make_weight_format(DType::kBf16, "nf4");
    FAIL("nf4 was accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find(std::string(quantization_names())) != std::string::npos);
  }
}
