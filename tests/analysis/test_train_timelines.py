#!/usr/bin/env python3
"""`vramsim train --timeline-out F.json --memory-snapshot-out F.pickle` (issue 15): the Chrome
trace holds every op of the HDF5 op timeline at the same times, and the memory snapshot is the
pickle torch.cuda.memory._dump_snapshot() writes: Python's own pickle module loads it, its
segments are covered exactly by their blocks, and replaying its device traces gives the peaks
the simulation reports (reserved: the segments; requested: the memory timeline's categories).

Usage: /usr/bin/python3 tests/analysis/test_train_timelines.py PATH/TO/vramsim
"""

import json
import os
import pickle
import subprocess
import sys
import tempfile
import unittest

import h5py

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VRAMSIM = None  # set from argv in __main__

# Two pipeline stages, so that both formats have more than one device.
PLAN = ["train", "--model", "meta-llama/Llama-3.2-1B", "--gpu", "h100-sxm", "--num-gpus", "2",
        "--pp", "2", "--micro-batch", "1", "--global-batch", "4", "--seq-len", "1024"]


def run(*args, check=True):
    proc = subprocess.run([VRAMSIM, *args], cwd=ROOT, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"vramsim {' '.join(args)} exited {proc.returncode}: "
                             f"{proc.stderr.strip()}")
    return proc


class TrainTimelines(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.h5 = os.path.join(d, "train.h5")
        cls.trace = os.path.join(d, "a trace.json")
        cls.snap = os.path.join(d, "snapshot.pickle")
        cls.out = run(*PLAN, "--out", cls.h5, "--timeline-out", cls.trace,
                      "--memory-snapshot-out", cls.snap).stdout
        with open(cls.trace) as f:
            cls.events = json.load(f)["traceEvents"]
        with open(cls.snap, "rb") as f:
            cls.snapshot = pickle.load(f)
        cls.json = json.loads(run(*PLAN, "--format", "json").stdout)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_table_names_both_files(self):
        self.assertIn(f"timeline written to {self.trace}", self.out)
        self.assertIn(f"memory snapshot written to {self.snap}", self.out)

    def test_every_op_is_a_complete_event_at_its_simulated_time(self):
        ops = [e for e in self.events if e["ph"] == "X"]
        with h5py.File(self.h5) as f:
            t = f["train/op_timeline"]
            start, end, device = t["start_ns"][:], t["end_ns"][:], t["device"][:]
            names = [n.decode() if isinstance(n, bytes) else n for n in t["op"][:]]
        self.assertEqual(len(ops), len(start))
        for e, s, en, dev, name in zip(ops, start, end, device, names):
            self.assertEqual(e["name"], name)
            self.assertEqual(e["pid"], dev)
            self.assertAlmostEqual(e["ts"], s / 1000.0, places=3)
            self.assertAlmostEqual(e["dur"], (en - s) / 1000.0, places=3)
            self.assertIn(e["tid"], (0, 1, 2))
        stages = {e["args"]["name"] for e in self.events
                  if e["ph"] == "M" and e["name"] == "process_name"}
        self.assertEqual(stages, {"pipeline stage 0", "pipeline stage 1"})
        counters = [e for e in self.events if e["ph"] == "C" and e["name"] == "memory (bytes)"]
        self.assertGreater(len(counters), 0)
        peak = max(c["args"]["allocated"] for c in counters)
        self.assertEqual(peak, self.json["peak_allocated_bytes"])

    def test_the_snapshot_has_the_structure_memory_viz_reads(self):
        s = self.snapshot
        self.assertEqual(sorted(s), ["device_traces", "segments"])
        self.assertEqual(len(s["device_traces"]), 2)
        for seg in s["segments"]:
            for key in ("device", "address", "total_size", "allocated_size", "requested_size",
                        "stream", "segment_type", "blocks", "frames"):
                self.assertIn(key, seg)
            addr = seg["address"]
            for b in seg["blocks"]:  # the viewer places blocks end to end from the segment
                self.assertEqual(b["address"], addr)
                self.assertIn(b["state"], ("active_allocated", "inactive"))
                self.assertLessEqual(b["requested_size"], b["size"])
                addr += b["size"]
            self.assertEqual(addr, seg["address"] + seg["total_size"])
        actions = {e["action"] for trace in s["device_traces"] for e in trace}
        self.assertEqual(actions, {"segment_alloc", "alloc", "free_requested", "free_completed"})
        for trace in s["device_traces"]:
            times = [e["time_us"] for e in trace]
            self.assertEqual(times, sorted(times))
            for e in trace:
                if e["action"] in ("alloc", "free_requested"):
                    self.assertEqual(len(e["frames"]), 1)
                    self.assertTrue(e["frames"][0]["filename"].startswith("vramsim/"))
        # memory_viz needs "unknown" among the categories once any event has one.
        cats = {e["category"] for trace in s["device_traces"] for e in trace}
        self.assertIn("unknown", cats)
        self.assertIn("parameters", cats)

    def test_replaying_the_traces_gives_the_simulated_peaks_and_the_final_state(self):
        with h5py.File(self.h5) as f:
            devices = f["train/devices"]
            peak_reserved = list(devices["peak_reserved_bytes"][:])
            mt = f["train/memory_timeline"]
            cat_cols = [c for c in ("parameters_bytes", "gradients_bytes",
                                    "optimizer_state_bytes", "activations_bytes",
                                    "temporaries_bytes", "workspaces_bytes",
                                    "comm_buffers_bytes")]
            dev = mt["device"][:]
            requested = sum(mt[c][:] for c in cat_cols)
        for d, trace in enumerate(self.snapshot["device_traces"]):
            reserved = live = top_reserved = top_live = 0
            blocks = {}
            for e in trace:
                if e["action"] == "segment_alloc":
                    reserved += e["size"]
                elif e["action"] == "segment_free":
                    reserved -= e["size"]
                elif e["action"] == "alloc":
                    self.assertNotIn(e["addr"], blocks)
                    blocks[e["addr"]] = e["size"]
                    live += e["size"]
                elif e["action"] == "free_completed":
                    self.assertEqual(blocks.pop(e["addr"]), e["size"])
                    live -= e["size"]
                top_reserved = max(top_reserved, reserved)
                top_live = max(top_live, live)
            self.assertEqual(top_reserved, peak_reserved[d])
            self.assertEqual(top_live, int(requested[dev == d].max()))
            segs = [s for s in self.snapshot["segments"] if s["device"] == d]
            self.assertEqual(sum(s["total_size"] for s in segs), reserved)
            active = {b["address"]: b["requested_size"] for s in segs for b in s["blocks"]
                      if b["state"] == "active_allocated"}
            self.assertEqual(active, blocks)

    def test_refusals(self):
        r = run(*PLAN, "--find-max-micro-batch", "--timeline-out",
                os.path.join(self.tmp.name, "x.json"), check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--timeline-out", r.stderr)
        missing = os.path.join(self.tmp.name, "no such dir", "s.pickle")
        r = run(*PLAN, "--memory-snapshot-out", missing, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("does not exist", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "x.json")))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_train_timelines.py PATH/TO/vramsim")
    VRAMSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
