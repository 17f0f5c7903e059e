// libFuzzer target: the Hugging Face config.json reader (sim/model/hf_config.hpp). A config it
// accepts is also sized (parameters, KV bytes per token), as `vramsim budget` would.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.hpp"
#include "sim/model/hf_config.hpp"
#include "sim/model/kv_cache_shape.hpp"
#include "sim/model/param_count.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramsim;
  const auto path = fuzz::write_input(data, size, "config.json");
  fuzz::expect_config_error_at_most([&] {
    const model::ModelSpec spec = model::load_hf_config(path);
    (void)model::count_params(spec);
    (void)model::kv_bytes_per_token(spec, DType::kBf16);
  });
  return 0;
}
