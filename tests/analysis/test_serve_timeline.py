#!/usr/bin/env python3
"""`vramsim serve --timeline-out F.json` (issue 15): every step of the HDF5 time series is one
complete event of its replica at the same time, and every finished request's phases are async
spans that match its row of /serve/requests.

Usage: /usr/bin/python3 tests/analysis/test_serve_timeline.py PATH/TO/vramsim
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import h5py

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VRAMSIM = None

RUN = ["serve", "scenarios/default.toml", "--num-requests", "300", "--replicas", "2"]


def run(*args, check=True):
    proc = subprocess.run([VRAMSIM, *args], cwd=ROOT, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"vramsim {' '.join(args)} exited {proc.returncode}: "
                             f"{proc.stderr.strip()}")
    return proc


class ServeTimeline(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.h5 = os.path.join(cls.tmp.name, "serve.h5")
        cls.trace = os.path.join(cls.tmp.name, "serve timeline.json")
        cls.out = run(*RUN, "--out", cls.h5, "--timeline-out", cls.trace).stdout
        with open(cls.trace) as f:
            cls.events = json.load(f)["traceEvents"]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_steps_match_the_time_series(self):
        steps = [e for e in self.events if e["ph"] == "X"]
        with h5py.File(self.h5) as f:
            ts = f["serve/timeseries"]
            t, rep, lat = ts["time_ns"][:], ts["replica"][:], ts["step_latency_ns"][:]
            tokens, decodes = ts["batch_tokens"][:], ts["batch_decodes"][:]
        self.assertEqual(len(steps), len(t))
        for e, t0, r, d, n, k in zip(steps, t, rep, lat, tokens, decodes):
            self.assertEqual(e["pid"], r)
            self.assertAlmostEqual(e["ts"], t0 / 1000.0, places=3)
            self.assertAlmostEqual(e["dur"], d / 1000.0, places=3)
            self.assertEqual(e["args"]["batch_tokens"], n)
            want = "decode" if k == n else ("prefill" if k == 0 else "mixed")
            self.assertEqual(e["name"], want)
        names = {e["args"]["name"] for e in self.events if e["ph"] == "M" and
                 e["name"] == "process_name"}
        self.assertEqual(names, {"replica 0", "replica 1"})
        self.assertIn(f"timeline written to {self.trace}", self.out)

    def test_request_phases_match_the_request_table(self):
        with h5py.File(self.h5) as f:
            rq = f["serve/requests"]
            rows = {int(i): (int(a), int(s), int(ft), int(fin)) for i, a, s, ft, fin in zip(
                rq["request_id"][:], rq["arrival_ns"][:], rq["first_scheduled_ns"][:],
                rq["first_token_ns"][:], rq["finish_ns"][:])}
        spans = {}
        for e in self.events:
            if e["ph"] in ("b", "e"):
                spans.setdefault((e["id"], e["name"]), {})[e["ph"]] = e["ts"]
        self.assertEqual(len(spans), 3 * len(rows))
        for rid, (a, s, ft, fin) in rows.items():
            for name, begin, end in (("queued", a, s), ("prefill", s, ft), ("decode", ft, fin)):
                span = spans[(rid, name)]
                self.assertAlmostEqual(span["b"], begin / 1000.0, places=3)
                self.assertAlmostEqual(span["e"], end / 1000.0, places=3)

    def test_a_bad_destination_is_refused_before_the_run(self):
        r = run(*RUN, "--timeline-out", os.path.join(self.tmp.name, "nope", "t.json"),
                check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--timeline-out", r.stderr)
        self.assertIn("does not exist", r.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_serve_timeline.py PATH/TO/vramsim")
    VRAMSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
