#!/usr/bin/env python3
"""analysis/validation/torch_memory_check.py without torch or a GPU: the plan (--dry-run), the
layer scaling and the scaled config vramsim reads, the vramsim commands it builds (run with the
built binary, their JSON has every field the comparison reads), and the comparison and report
on fake measurements.

Usage: /usr/bin/python3 tests/analysis/test_torch_memory_check.py PATH/TO/vramsim
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VALIDATION = os.path.join(ROOT, "analysis", "validation")
SCRIPT = os.path.join(VALIDATION, "torch_memory_check.py")
sys.path.insert(0, VALIDATION)

import torch_memory_check as tmc  # noqa: E402
import torch_memory_report as tmr  # noqa: E402

VRAMSIM = None  # set from argv in __main__
GIB = 1024 ** 3


def settings(**overrides):
    args = tmc.make_parser().parse_args([])
    s = tmc.settings_from_args(args)
    s.update(overrides)
    s["max_len"] = s["prompt_len"] + s["gen_len"]
    return s


def run_script(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          timeout=300, check=False, cwd=ROOT)


class TorchIsNotNeeded(unittest.TestCase):
    def test_the_planning_modules_import_without_torch(self):
        self.assertNotIn("torch", sys.modules)


class DryRun(unittest.TestCase):
    def test_a_quick_dry_run_prints_the_plan_and_the_vramsim_commands_and_writes_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            proc = run_script("--dry-run", "--quick", "--out", out, "--vramsim", VRAMSIM)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertFalse(os.path.exists(out))
        text = proc.stdout
        self.assertIn("layers           2 of 16", text)
        self.assertIn("train checkpointing=none: micro-batch 1, seq 256", text)
        self.assertIn("train checkpointing=full: micro-batch 1, seq 256", text)
        self.assertIn(f"{VRAMSIM} train --model {out}/configs/meta-llama__Llama-3.2-1B.L2.json "
                      "--gpu h200 --micro-batch 1 --seq-len 256 --checkpointing none "
                      "--precision bf16-mixed --optimizer adamw --num-gpus 1 --format json", text)
        self.assertIn(f"{VRAMSIM} budget --model {out}/configs/meta-llama__Llama-3.2-1B.L2.json "
                      "--gpu h200 --dtype bf16 --kv-cache-dtype bf16 --max-model-len 80 "
                      "--max-num-seqs 4 --max-num-batched-tokens 256 --enforce-eager "
                      "--no-suggestions --format json", text)

    def test_an_8b_model_is_scaled_to_fewer_layers_on_an_h200_and_the_plan_says_so(self):
        proc = run_script("--dry-run", "--model", "meta-llama/Llama-3.1-8B", "--micro-batch", "1",
                          "--seq-len", "4096")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r"scaled to \d+ of 32 decoder layers")

    def test_bad_arguments_exit_2_with_a_message(self):
        for args in (["--checkpointing", "selective"], ["--model", "openai-community/gpt2"],
                     ["--model", "no/such-model"], ["--seq-len", "0"]):
            proc = run_script("--dry-run", *args)
            self.assertEqual(proc.returncode, 2, args)
            self.assertIn("torch_memory_check:", proc.stderr)

    def test_a_measurement_without_torch_exits_2_and_names_the_alternatives(self):
        proc = run_script("--quick", "--out", tempfile.gettempdir())
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--dry-run or --simulate-only", proc.stderr)


class Scaling(unittest.TestCase):
    def test_the_layer_count_is_the_largest_whose_estimate_fits(self):
        arch = tmc.arch_from_config(tmc.load_config(
            tmc.resolve_config_path("meta-llama/Llama-3.1-8B")))
        s = settings(micro_batch=1, seq_len=4096)
        n, note = tmc.choose_num_layers(arch, s, tmc.H200_TOTAL_BYTES)
        limit = s["fit_fraction"] * tmc.H200_TOTAL_BYTES
        self.assertLess(n, 32)
        for c in ("none", "full"):
            self.assertLessEqual(tmc.estimate_train_peak_bytes(arch, n, 1, 4096, c), limit)
        self.assertGreater(tmc.estimate_train_peak_bytes(arch, n + 1, 1, 4096, "none"), limit)
        self.assertIn(f"scaled to {n} of 32", note)
        self.assertEqual(tmc.choose_num_layers(arch, s, 100 * tmc.H200_TOTAL_BYTES), (32, ""))
        with self.assertRaises(tmc.PlanError):
            tmc.choose_num_layers(arch, s, 8 * GIB)

    def test_the_scaled_config_keeps_every_key_but_the_layer_count_and_the_name(self):
        cfg = tmc.load_config(tmc.resolve_config_path("meta-llama/Llama-3.1-8B"))
        with tempfile.TemporaryDirectory() as tmp:
            path = tmc.write_scaled_config(cfg, 4, os.path.join(tmp, "configs", "x.json"))
            with open(path, encoding="utf-8") as f:
                scaled = json.load(f)
        self.assertEqual(scaled["num_hidden_layers"], 4)
        self.assertEqual(scaled["_name_or_path"], "meta-llama/Llama-3.1-8B (4 of 32 layers)")
        for key, value in cfg.items():
            if key not in ("num_hidden_layers", "_name_or_path"):
                self.assertEqual(scaled[key], value, key)


class VramsimCommands(unittest.TestCase):
    def test_the_parameter_count_of_the_torch_model_equals_vramsims_for_every_family(self):
        models = ("meta-llama/Llama-3.2-1B", "meta-llama/Llama-3.1-8B", "Qwen/Qwen2.5-7B",
                  "Qwen/Qwen3-0.6B", "Qwen/Qwen3-8B", "mistralai/Mistral-7B-v0.3")
        with tempfile.TemporaryDirectory() as tmp:
            for model in models:
                cfg = tmc.load_config(tmc.resolve_config_path(model))
                arch = tmc.arch_from_config(cfg)
                path = tmc.write_scaled_config(cfg, 3, os.path.join(tmp, f"{arch['vocab']}.json"))
                cmd = tmc.budget_command(VRAMSIM, path, "h200", 4, 64, 128)
                budget = tmc.run_vramsim(cmd)
                self.assertEqual(budget["num_params"], tmc.param_counts(arch, 3)["total"], model)

    def test_every_planned_command_runs_and_returns_the_fields_the_comparison_reads(self):
        with tempfile.TemporaryDirectory() as tmp:
            plan = tmc.build_plan("meta-llama/Llama-3.2-1B", settings(num_layers=2, seq_len=256,
                                                                      decode_batch=4,
                                                                      prompt_len=64, gen_len=16),
                                  tmc.H200_TOTAL_BYTES, tmp, VRAMSIM)
            sims = tmc.run_simulations(plan)
            self.assertTrue(os.path.isfile(plan["scaled_config_path"]))
        self.assertEqual(sorted(sims), ["decode", "train checkpointing=full",
                                        "train checkpointing=none"])
        for name, sim in sims.items():
            self.assertNotIn("error", sim, name)
            fields = tmc.BUDGET_FIELDS if name == "decode" else tmc.TRAIN_FIELDS
            for field in fields:
                self.assertIn(field, sim, f"{name}: {field}")
            if name != "decode":
                self.assertEqual(sim["checkpointing"], name.split("=")[1])
                self.assertEqual(sim["precision"], "bf16-mixed")
                self.assertTrue(sim["model"].endswith("(2 of 16 layers)"))
                # bf16-mixed AdamW: exactly 16 bytes per parameter of model state.
                self.assertEqual(sim["model_state_bytes"], 16 * plan["params"]["total"])
        self.assertEqual(sims["decode"]["kv_bytes_per_token"], 2 * 2 * 8 * 64 * 2)

    def test_simulate_only_writes_a_report_that_claims_no_measurement(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = run_script("--simulate-only", "--quick", "--out", tmp, "--vramsim", VRAMSIM)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(os.path.join(tmp, "torch_memory_check.json"), encoding="utf-8") as f:
                report = json.load(f)
            with open(os.path.join(tmp, "torch_memory_check.md"), encoding="utf-8") as f:
                md = f.read()
        self.assertEqual(report["schema"], tmc.SCHEMA)
        self.assertEqual(report["status"], "simulated only: no measurements")
        self.assertEqual(len(report["cases"]), 3)
        for case in report["cases"]:
            self.assertIsNone(case["measured"])
            self.assertTrue(all(r["measured"] is None for r in case["comparison"]))
        self.assertIn("**Status: simulated only: no measurements.**", md)


class Comparison(unittest.TestCase):
    SIM = {"peak_allocated_bytes": 110, "peak_reserved_bytes": 120, "model_state_bytes": 64,
           "activation_bytes": 30, "non_allocator_bytes": 10, "step_time_s": 0.5}
    MEASURED = {"peak_allocated_bytes": 100, "peak_reserved_bytes": 150, "model_state_bytes": 64,
                "activation_bytes": 40, "forward_retained_bytes": 50, "device_used_bytes": 160,
                "non_allocator_bytes": 8, "step_time_s": 0.4}

    def test_training_rows_pair_each_measurement_with_its_vramsim_field(self):
        rows = {r["quantity"]: r for r in tmr.compare_train(self.MEASURED, self.SIM)}
        expect = {"peak allocated": (100, 110, 0.1), "peak reserved": (150, 120, -0.2),
                  "device used": (160, 130, -30 / 160), "outside the allocator": (8, 10, 0.25),
                  "model state": (64, 64, 0.0), "activations": (40, 30, -0.25),
                  "activations incl. AMP weight copies": (50, 30, -0.4),
                  "step time": (0.4, 0.5, 0.25)}
        self.assertEqual(set(rows), set(expect))
        for quantity, (m, s, err) in expect.items():
            self.assertEqual((rows[quantity]["measured"], rows[quantity]["simulated"]), (m, s))
            self.assertAlmostEqual(rows[quantity]["rel_error"], err, places=12)

    def test_missing_values_give_no_error_instead_of_a_crash(self):
        rows = tmr.compare_train({}, {})
        self.assertTrue(all(r["rel_error"] is None for r in rows))
        self.assertIsNone(tmr.rel_error(0, 5))

    def test_the_decode_analogue_adds_weights_profile_activations_and_the_cache(self):
        budget = {"weights_bytes": 1000, "activation_peak_bytes": 200, "kv_bytes_per_token": 2,
                  "non_torch_bytes": 30, "cuda_context_bytes": 70}
        sim = tmr.simulated_decode(budget, batch=4, max_len=10)
        self.assertEqual(sim, {"kv_cache_bytes": 80, "peak_allocated_bytes": 1280,
                               "outside_allocator_bytes": 100, "device_used_bytes": 1380})
        measured = {"weights_bytes": 1000, "kv_cache_bytes": 80, "activation_peak_bytes": 250,
                    "peak_allocated_bytes": 1330, "peak_reserved_bytes": 1400,
                    "non_allocator_bytes": 100, "device_used_bytes": 1500}
        rows = {r["quantity"]: r for r in tmr.compare_decode(measured, budget, 4, 10)}
        self.assertEqual(rows["KV cache"]["rel_error"], 0.0)
        self.assertAlmostEqual(rows["activation peak"]["rel_error"], -0.2)
        self.assertAlmostEqual(rows["peak allocated"]["rel_error"], -50 / 1330)
        self.assertAlmostEqual(rows["device used"]["rel_error"], -120 / 1500)

    def test_the_markdown_shows_each_pair_with_units_and_signed_percent(self):
        report = {"status": "measured", "model": {"model": "m", "params": {"total": 7}},
                  "environment": {"device_name": "NVIDIA H200", "torch_version": "2.5.1",
                                  "device_total_bytes": 2 * GIB},
                  "cases": [{"name": "train checkpointing=none", "micro_batch": 1,
                             "seq_len": 8, "checkpointing": "none", "vramsim_line": "vramsim x",
                             "comparison": tmr.compare_train(
                                 {"peak_allocated_bytes": 2 * GIB, "step_time_s": 0.01},
                                 {"peak_allocated_bytes": 3 * GIB, "step_time_s": 0.02}),
                             "measured": {"phase_peak_allocated_bytes": {"forward": GIB}}}]}
        md = tmr.render_markdown(report)
        self.assertNotIn("Status", md)
        self.assertIn("- device_name: NVIDIA H200", md)
        self.assertIn("- device_total_bytes: 2.00 GiB", md)
        self.assertIn("| peak allocated | 2.000 GiB | 3.000 GiB | +50.0 % |", md)
        self.assertIn("| step time | 10.00 ms | 20.00 ms | +100.0 % |", md)
        self.assertIn("| model state | - | - | - |", md)
        self.assertIn("measured peak allocated by phase: forward 1.000 GiB", md)
        with tempfile.TemporaryDirectory() as tmp:
            json_path, md_path = tmr.write_report(report, tmp)
            with open(json_path, encoding="utf-8") as f:
                self.assertEqual(json.load(f)["status"], "measured")
            self.assertEqual(sorted(os.listdir(tmp)),
                             ["torch_memory_check.json", "torch_memory_check.md"])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_torch_memory_check.py PATH/TO/vramsim")
    VRAMSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
