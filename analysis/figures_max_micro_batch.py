"""`vramsim train --find-max-micro-batch --out` files (/max_micro_batch): each policy's peak
memory against the micro-batch over the search's probes, the largest micro-batch and its
throughput per policy as bars, and the tables /max_micro_batch/policies and
/max_micro_batch/probes."""

import vramsim_results as vr
from figure_common import Skipped, group_table
from figures_capacity import attribute_table, policy_bars_figure, probe_memory_figure

SECTION = "Largest micro-batch"
# (column, panel title, axis label, scale from the stored unit)
PANELS = (("max_micro_batch", "Largest micro-batch that fits", "micro-batch (sequences)", 1.0),
          ("peak_reserved_bytes", "Peak reserved at that micro-batch", "peak reserved (GiB)",
           1.0 / vr.BYTES_PER_GIB),
          ("tokens_per_s", "Throughput at that micro-batch", "throughput (tokens/s)", 1.0))


def render(res, outdir, max_points):
    del max_points
    group = res.group("max_micro_batch")
    policies = res.group("max_micro_batch/policies")
    if policies is None or vr.num_rows(policies) == 0:
        return [Skipped(SECTION, "Largest micro-batch per policy",
                        "the file has no /max_micro_batch/policies table or it is empty")]
    items = [policy_bars_figure(policies, outdir, "max_micro_batch_policies.png", PANELS,
                                "Largest micro-batch per checkpointing policy", SECTION)]
    probes = res.group("max_micro_batch/probes")
    if probes is None:
        items.append(Skipped(SECTION, "Peak memory per probe",
                             "the file has no /max_micro_batch/probes table"))
    else:
        items.append(probe_memory_figure(probes, group, outdir, "max_micro_batch_memory.png",
                                         "Peak memory against the micro-batch, per policy",
                                         SECTION))
    return items


def tables(res):
    out = []
    group = res.group("max_micro_batch")
    if group is not None:
        out.append(attribute_table(group, SECTION, "Plan (/max_micro_batch)"))
    for sub, title in (("policies", "Policies (/max_micro_batch/policies)"),
                       ("probes", "Every simulation (/max_micro_batch/probes)")):
        g = res.group(f"max_micro_batch/{sub}")
        if g is not None:
            out.append(group_table(g, SECTION, title, transpose_upto=0))
    return out
