// The budget's runtime overheads (budget.hpp RuntimeOverheads) from a calibration profile's
// measured memory, in place of default_overheads():
//
//   cuda_context     memory.cuda_context_bytes                       (when measured, > 0)
//   non_torch_base   cublas_handle_bytes + cublas_workspace_bytes     (when either > 0)
//   non_torch_comm   nccl_communicator_bytes, only when measured over >= 2 ranks: a
//                    single-rank communicator allocates almost no buffers and says nothing
//                    about TP > 1
//   cuda_graph_per_graph  always the default (the profile does not measure graphs)
//   non_torch_pp_only     always the default (the profile does not measure a P2P-only rank)
//
// Whatever the profile lacks keeps its default; `source` names the profile file and lists the
// fields that stayed defaults.
#pragma once

#include "sim/hardware/calibration_record.hpp"
#include "sim/memory/budget.hpp"

namespace vramsim::memory {

/// RuntimeOverheads with the profile's measurements over default_overheads(nvswitch).
/// NOTE: vLLM's non-torch memory also holds attention-backend workspaces the profile does not
/// measure, so the measured non_torch_base is a lower bound of what vLLM reports.
RuntimeOverheads overheads_from_profile(const calibration::CalibrationProfile& profile,
                                        bool interconnect_is_nvswitch);

}  // namespace vramsim::memory
