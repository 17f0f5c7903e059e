// A simulated training run in the formats people already open:
//
//   Chrome trace event JSON (`train --timeline-out F.json`): the format of chrome://tracing and
//   ui.perfetto.dev (Google's "Trace Event Format" document). One process per pipeline stage,
//   one thread per stream (compute, comm, p2p), one complete ("X") event per op with its step,
//   micro-batch and layer; counters ("C") of allocated and reserved bytes and of each memory
//   category. Times are microseconds (the format's unit) printed to the nanosecond.
//
//   PyTorch memory snapshot pickle (`train --memory-snapshot-out F.pickle`): what
//   torch.cuda.memory._dump_snapshot() writes and pytorch.org/memory_viz opens: `segments` (each
//   device's allocator segments at the end of the run, with their blocks) and `device_traces`
//   (per device, every segment_alloc / alloc / free_requested / free_completed event in time
//   order, with time_us, the requested size, a category and one frame naming the op). The
//   device is the pipeline stage; addresses are the caching-allocator model's synthetic ones.
#pragma once

#include <ostream>

#include "sim/training/step_graph.hpp"
#include "sim/training/step_simulator.hpp"

namespace vramsim::run {

/// Needs a result simulated with record_timeline.
void write_train_chrome_trace(const training::TrainingSetup& setup,
                              const training::TrainingResult& r, std::ostream& out);

/// Needs a result simulated with record_allocations.
void write_train_memory_snapshot(const training::TrainingResult& r, std::ostream& out);

}  // namespace vramsim::run
