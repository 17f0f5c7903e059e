#!/usr/bin/env python3
"""`import vramsim_results as vr` as a user has it (issue 15): scripts/setup.sh installed this
checkout's analysis/vramsim_results.py for the system Python, and `vr.read` / `vr.summary` /
`vr.tables` open the files the built binary writes.

Usage: /usr/bin/python3 -E tests/analysis/test_results_package.py PATH/TO/vramsim
The analysis folder is deliberately NOT put on sys.path: the import must find the installed
module (run scripts/setup.sh after changing analysis/vramsim_results.py).
"""

import filecmp
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VRAMSIM = None  # set from argv in __main__

import vramsim_results as vr  # noqa: E402  (the installed copy)


def run(*args):
    proc = subprocess.run([VRAMSIM, *args], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"vramsim {' '.join(args)} exited {proc.returncode}: "
                             f"{proc.stderr.strip()}")
    return proc


class InstalledModule(unittest.TestCase):
    def test_the_installed_module_is_this_checkouts(self):
        installed = os.path.realpath(vr.__file__)
        source = os.path.join(ROOT, "analysis", "vramsim_results.py")
        self.assertNotEqual(os.path.dirname(installed), os.path.join(ROOT, "analysis"),
                            "imported from the source tree, not the installed copy")
        self.assertTrue(filecmp.cmp(installed, source, shallow=False),
                        f"{installed} differs from {source}: run scripts/setup.sh")


class ReadAndSummary(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.serve = os.path.join(d, "serve run.h5")  # any file name: a space
        run("serve", "scenarios/default.toml", "--num-requests", "200", "--out", cls.serve)
        cls.serve_json = run("serve", "scenarios/default.toml", "--num-requests", "200",
                             "--format", "json").stdout
        cls.train = os.path.join(d, "train.h5")
        run("train", "--model", "meta-llama/Llama-3.2-1B", "--gpu", "h100-sxm",
            "--num-gpus", "2", "--out", cls.train)
        cls.budget = os.path.join(d, "budget.h5")
        run("budget", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm",
            "--tp", "2", "--out", cls.budget)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_read_gives_a_dataframe_with_units(self):
        df = vr.read(self.serve, "serve/requests")
        self.assertEqual(len(df), 200)
        self.assertEqual(list(df.columns)[:3], ["request_id", "status", "replica"])
        self.assertEqual(df.attrs["units"]["arrival_ns"], "ns")
        self.assertEqual(df.attrs["units"]["prompt_tokens"], "1")
        self.assertEqual(df.attrs["table"], "serve/requests")
        self.assertEqual(df.attrs["created_by"], "vramsim serve")
        self.assertTrue((df["finish_ns"] >= df["first_token_ns"]).all())
        picked = vr.read(self.serve, "/serve/requests", ["prompt_tokens"])
        self.assertEqual(list(picked.columns), ["prompt_tokens"])

    def test_summary_holds_the_numbers_the_json_prints(self):
        import json
        printed = json.loads(self.serve_json)
        s = vr.summary(self.serve)
        self.assertEqual(s["created_by"], "vramsim serve")
        self.assertEqual(s["num_finished"], 200)
        for key in ("ttft_p99_s", "tpot_p50_s", "throughput_requests_per_s"):
            self.assertEqual(s[key], printed[key], key)
        self.assertEqual(s["inputs"]["model"], "meta-llama/Llama-3.1-8B-Instruct")
        self.assertGreater(s["budget"]["devices"][0]["num_gpu_blocks"], 0)

    def test_summary_of_budget_and_train_lists_devices(self):
        b = vr.summary(self.budget)
        self.assertEqual(len(b["devices"]), 2)  # TP 2: one row per device
        self.assertEqual(b["devices"][1]["tp_rank"], 1)
        self.assertIn(b["fits"], (0, 1))
        t = vr.summary(self.train)
        self.assertGreater(t["step_time_s"], 0.0)
        self.assertGreaterEqual(len(t["devices"]), 1)
        units = vr.read(self.train, "train/devices").attrs["units"]
        self.assertEqual(units["peak_allocated_bytes"], "B")
        self.assertEqual(units["step_time_s"], "s")
        ops = vr.read(self.train, "train/op_timeline", ["kind", "op"])
        self.assertIsInstance(ops["op"].iloc[0], str)  # strings decoded, not bytes

    def test_tables_and_bad_input(self):
        self.assertEqual(vr.tables(self.serve),
                         ["budget", "serve/requests", "serve/summary", "serve/timeseries"])
        with self.assertRaisesRegex(vr.ResultsError, "no table 'serve/nope'; its tables: budget"):
            vr.read(self.serve, "serve/nope")
        with self.assertRaisesRegex(vr.ResultsError, "has no column 'nope'"):
            vr.read(self.serve, "serve/requests", ["nope"])
        not_hdf5 = os.path.join(self.tmp.name, "not.h5")
        with open(not_hdf5, "w") as f:
            f.write("arrival_s,prompt_tokens\n")
        with self.assertRaises(OSError):
            vr.summary(not_hdf5)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_results_package.py PATH/TO/vramsim")
    VRAMSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
