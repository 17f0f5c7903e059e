// `vramsim list models|gpus|policies`: what the model zoo, the device sheets and the policy
// registries hold.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/core/error.hpp"
#include "sim/io/topology_loader.hpp"
#include "sim/model/param_count.hpp"
#include "sim/model/model_zoo.hpp"
#include "sim/run/data_root.hpp"
#include "sim/serving/routers/builtin_routers.hpp"
#include "sim/serving/scheduler.hpp"
#include "sim/serving/schedulers/builtin_schedulers.hpp"

namespace vramsim::cli {

namespace {
struct ListOptions {
  std::string what;
  OutputFormat format = OutputFormat::kTable;
};

int run_list(const ListOptions& o) {
  const std::filesystem::path root = run::checked_project_root();
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  if (o.what == "models") {
    for (const std::string& id : model::zoo_model_ids(root / "scenarios" / "models")) {
      const model::ModelSpec m = model::load_model(id, root / "scenarios" / "models");
      const model::ParamCount p = model::count_params(m);
      rows.push_back({{"id", id}, {"architecture", m.architecture}, {"num_params", p.total},
                      {"num_active_params", p.active}, {"num_layers", m.num_layers},
                      {"max_position_embeddings", m.max_position_embeddings}});
      if (o.format == OutputFormat::kTable) {
        fmt::print("{:<48} {:>8.2f} B  {:<32} {:>4} layers\n", id,
                   static_cast<double>(p.total) / 1e9, m.architecture, m.num_layers);
      }
    }
  } else if (o.what == "gpus") {
    const std::filesystem::path topo = root / "topologies";
    for (const std::string& id : io::device_ids(topo)) {
      const hardware::DeviceSpec d = io::find_device(id, topo);
      rows.push_back({{"id", id}, {"name", d.name}, {"memory_total_bytes", d.memory_total.count()},
                      {"memory_bandwidth_bytes_per_s", d.memory_bandwidth.bytes_per_second()}});
      if (o.format == OutputFormat::kTable) {
        fmt::print("{:<14} {:<36} {:>10} reported total, {:>7.0f} GB/s\n", id, d.name,
                   format_bytes(d.memory_total), d.memory_bandwidth.bytes_per_second() / 1e9);
      }
    }
  } else if (o.what == "policies") {
    serving::SchedulerRegistry schedulers;
    serving::register_builtin_schedulers(schedulers);
    serving::RouterRegistry routers;
    serving::register_builtin_routers(routers);
    const auto row = [&](const char* family, const std::string& name, const std::string& what) {
      rows.push_back({{"family", family}, {"name", name}, {"description", what}});
      if (o.format == OutputFormat::kTable) fmt::print("{:<10} {:<26} {}\n", family, name, what);
    };
    for (const auto& d : schedulers.all()) row("scheduler", d.name, d.description);
    for (const auto& d : routers.all()) row("router", d.name, d.description);
    for (const auto& r : serving::kPreemptionModes.rows) {
      row("preemption", std::string(r.name), std::string(r.description));
    }
  } else {
    throw ConfigError("list", fmt::format("unknown list '{}'; valid: models, gpus, policies",
                                          o.what));
  }
  if (o.format == OutputFormat::kJson) std::puts(rows.dump(2).c_str());
  return kExitOk;
}
}  // namespace

RunFn register_list(CLI::App& app) {
  auto opts = std::make_shared<ListOptions>();
  CLI::App* cmd = app.add_subcommand("list", "The model zoo, the device sheets or the policies");
  cmd->add_option("what", opts->what, "models, gpus or policies")->required();
  add_format_option(*cmd, opts->format);
  return [cmd, opts]() { return cmd->parsed() ? run_list(*opts) : -1; };
}

}  // namespace vramsim::cli
