#include "sim/io/scenario_loader.hpp"

#include <fstream>
#include <sstream>

#include "sim/io/toml_reader.hpp"

namespace vramsim::io {

namespace {

template <class T, class Getter>
void read_into(TomlReader& r, std::string_view path, std::optional<Located<T>>& out,
               Getter get) {
  if (auto v = get(r, path)) out = Located<T>{*v, std::string(path), r.location(path)};
}

}  // namespace

ServingScenario load_serving_scenario(const std::filesystem::path& file) {
  TomlReader r = TomlReader::from_file(file);
  ServingScenario s;
  s.file = file.string();
  {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    s.text = text.str();
  }
  const auto str = [](TomlReader& t, std::string_view p) { return t.optional_string(p); };
  const auto i64 = [](TomlReader& t, std::string_view p) { return t.optional_int64(p); };
  const auto dbl = [](TomlReader& t, std::string_view p) { return t.optional_double(p); };
  const auto bln = [](TomlReader& t, std::string_view p) { return t.optional_bool(p); };
  r.optional_table("model");
  r.optional_table("hardware");
  r.optional_table("engine");
  r.optional_string("description");
  read_into(r, "model.id", s.model, str);
  read_into(r, "hardware.gpu", s.gpu, str);
  read_into(r, "engine.tp", s.tp, i64);
  read_into(r, "engine.pp", s.pp, i64);
  read_into(r, "engine.dtype", s.dtype, str);
  read_into(r, "engine.kv_cache_dtype", s.kv_cache_dtype, str);
  read_into(r, "engine.quantization", s.quantization, str);
  read_into(r, "engine.max_model_len", s.max_model_len, i64);
  read_into(r, "engine.max_num_seqs", s.max_num_seqs, i64);
  read_into(r, "engine.max_num_batched_tokens", s.max_num_batched_tokens, i64);
  read_into(r, "engine.gpu_memory_utilization", s.gpu_memory_utilization, dbl);
  read_into(r, "engine.block_size", s.block_size, i64);
  read_into(r, "engine.num_gpu_blocks", s.num_gpu_blocks, i64);
  read_into(r, "engine.enforce_eager", s.enforce_eager, bln);
  read_into(r, "seed", s.seed, i64);
  r.finish();
  return s;
}

}  // namespace vramsim::io
