#include "sim/memory/calibrated_overheads.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace vramsim::memory {

RuntimeOverheads overheads_from_profile(const calibration::CalibrationProfile& profile,
                                        bool interconnect_is_nvswitch) {
  RuntimeOverheads o = default_overheads(interconnect_is_nvswitch);
  const calibration::MemoryRecord& m = profile.memory;
  std::vector<std::string> defaults;
  if (m.cuda_context_bytes > 0) {
    o.cuda_context = Bytes(m.cuda_context_bytes);
  } else {
    defaults.push_back("cuda_context");
  }
  if (m.cublas_handle_bytes + m.cublas_workspace_bytes > 0) {
    o.non_torch_base = Bytes(m.cublas_handle_bytes + m.cublas_workspace_bytes);
    // NOTE: the measured handles hold nothing of vLLM's start-up CUDA-graph profile, so no
    // release is charged it (nor relieved of it) with a calibration profile.
    o.non_torch_graph_profiling = Bytes(0);
  } else {
    defaults.push_back("non_torch_base");
  }
  if (m.nccl_communicator_bytes > 0 && m.nccl_communicator_ranks >= 2) {
    o.non_torch_comm = Bytes(m.nccl_communicator_bytes);
  } else {
    defaults.push_back("non_torch_comm");
  }
  defaults.push_back("cuda_graph_per_graph");
  defaults.push_back("non_torch_pp_only");
  std::string kept;
  for (const std::string& d : defaults) kept += (kept.empty() ? "" : ", ") + d;
  o.source = fmt::format("calibration {} (defaults: {})",
                         profile.source_file.empty() ? "(in memory)" : profile.source_file, kept);
  return o;
}

}  // namespace vramsim::memory
