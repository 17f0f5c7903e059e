#!/usr/bin/env python3
"""analysis/report.py and `vramsim report`: every figure is drawn from a small results file and
is a real picture (right size, more than one colour, more than a few kilobytes), index.html
shows each one, and the command's exit codes follow DESIGN.md.

Usage: /usr/bin/python3 tests/analysis/test_report.py PATH/TO/vramsim
Serve, train, budget, capacity (serve and train) and --find-max-micro-batch files come from the
built binary (small runs); compare and sweep files
are fixtures written here with h5py to the contract of issue 6 (/compare/options and
/sweep/summary), so the figures are tested before and independently of those commands.
"""

import filecmp
import html.parser
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "analysis"))

import matplotlib.image  # noqa: E402

import figure_common  # noqa: E402
import figures_sweep  # noqa: E402
import figures_train  # noqa: E402
import report  # noqa: E402
import vramsim_results as vr  # noqa: E402

VRAMSIM = None  # set from argv in __main__
WIDE = (500, 1000)  # figure_common.WIDE at 100 dpi: rows x columns of pixels
TALL = (750, 1000)


# --- fixtures for the commands being written elsewhere -------------------------------------

def write_table(group, cols, units):
    """A columnar table as SCHEMA.md lays it out: one dataset per column, `columns`, `units`."""
    group.attrs["columns"] = np.array(list(cols), dtype=h5py.string_dtype())
    for name, values in cols.items():
        if isinstance(values[0], str):
            ds = group.create_dataset(name, data=np.array(values, dtype=h5py.string_dtype()))
        else:
            ds = group.create_dataset(name, data=np.asarray(values))
        ds.attrs["units"] = units.get(name, "")


def root_attributes(f, created_by, command):
    f.attrs["schema_version"] = vr.SCHEMA_VERSION
    f.attrs["vramsim_version"] = "0.1.0"
    f.attrs["command"] = command
    f.attrs["scenario_text"] = ""
    f.attrs["seed"] = 1
    f.attrs["inputs"] = '{"model": "meta-llama/Llama-3.1-8B", "gpu": "h100-sxm"}'
    f.attrs["calibration_source"] = "defaults"
    f.attrs["created_by"] = created_by


def write_compare_serve(path):
    with h5py.File(path, "w") as f:
        root_attributes(f, "vramsim compare", "vramsim compare --gpus 2 --out c.h5")
        g = f.create_group("compare")
        g.attrs["mode"] = "serve"
        g.attrs["verdict"] = ("a second H100 over NVLink helps: 2 replicas give 1.93x goodput; "
                              "TP=2 gives 1.41x and halves p99 TTFT")
        write_table(g.create_group("options"), {
            "name": ["1 GPU", "2 replicas", "TP=2", "PP=2"],
            "num_gpus": np.array([1, 2, 2, 2], np.int64),
            "throughput_output_tokens_per_s": [1174.0, 2265.8, 1655.3, 1402.0],
            "goodput_requests_per_s": [5.5, 10.6, 7.8, 6.6],
            "ttft_p99_s": [0.1004, 0.0911, 0.0502, 0.1203],
            "tpot_p99_s": [0.0103, 0.0101, 0.0071, 0.0122],
            "speedup": [1.0, 1.93, 1.41, 1.19],
            "scaling_efficiency": [1.0, 0.965, 0.705, 0.595],
        }, {"num_gpus": "1", "throughput_output_tokens_per_s": "1/s",
            "goodput_requests_per_s": "1/s", "ttft_p99_s": "s", "tpot_p99_s": "s",
            "speedup": "1", "scaling_efficiency": "1"})


def write_compare_train(path):
    """Training mode, without the optional tokens_per_s and scaling_efficiency columns."""
    with h5py.File(path, "w") as f:
        root_attributes(f, "vramsim compare", "vramsim compare --train --out c.h5")
        g = f.create_group("compare")
        g.attrs["mode"] = "train"
        g.attrs["verdict"] = "one H100 does not fit; FSDP on two gives the fastest step"
        write_table(g.create_group("options"), {
            "name": ["1 GPU", "DDP x2", "FSDP x2", "TP=2"],
            "num_gpus": np.array([1, 2, 2, 2], np.int64),
            "fits": np.array([0, 0, 1, 1], np.int64),
            "peak_allocated_bytes": np.array([130, 120, 70, 75], np.int64) << 30,
            "step_time_s": [np.nan, np.nan, 2.4, 2.9],
            "speedup": [np.nan, np.nan, 1.0, 0.83],
        }, {"num_gpus": "1", "fits": "1", "peak_allocated_bytes": "B", "step_time_s": "s",
            "speedup": "1"})


def sweep_columns(n, kind, rng):
    gpu = ["h100-sxm" if i % 2 == 0 else "a100-80gb" for i in range(n)]
    status = ["ok"] * n
    reason = [""] * n
    status[3] = "infeasible"
    reason[3] = "weights 140 GB > HBM 80 GiB"
    cols = {"point_index": np.arange(n, dtype=np.int64), "status": status, "reason": reason,
            "gpu": gpu, "tp": [str(1 << (i % 3)) for i in range(n)]}
    units = {"point_index": "1"}
    if kind == "serve":
        cols["throughput_output_tokens_per_s"] = rng.uniform(500, 3000, n)
        cols["ttft_p99_s"] = rng.uniform(0.05, 2.0, n)
        cols["e2e_p99_s"] = rng.uniform(2, 20, n)
        for c in ("throughput_output_tokens_per_s", "ttft_p99_s", "e2e_p99_s"):
            cols[c][3] = np.nan
        units.update(throughput_output_tokens_per_s="1/s", ttft_p99_s="s", e2e_p99_s="s")
    else:
        cols["step_time_s"] = rng.uniform(0.5, 5.0, n)
        cols["peak_allocated_bytes"] = rng.integers(20 << 30, 80 << 30, n).astype(np.int64)
        cols["step_time_s"][3] = np.nan
        cols["peak_allocated_bytes"][3] = 0
        units.update(step_time_s="s", peak_allocated_bytes="B")
    return cols, units


def write_sweep(path, kind, n=24):
    rng = np.random.default_rng(7)
    with h5py.File(path, "w") as f:
        root_attributes(f, "vramsim sweep", f"vramsim sweep grid_{kind}.toml --out s.h5")
        cols, units = sweep_columns(n, kind, rng)
        write_table(f.create_group("sweep").create_group("summary"), cols, units)


def write_sweep_without_metrics(path):
    """A sweep whose summary has no metric columns at all: both fronts are skipped, not failed."""
    with h5py.File(path, "w") as f:
        root_attributes(f, "vramsim sweep", "vramsim sweep g.toml --out s.h5")
        write_table(f.create_group("sweep").create_group("summary"),
                    {"point_index": np.arange(3, dtype=np.int64), "status": ["ok"] * 3,
                     "reason": [""] * 3, "gpu": ["a", "b", "c"]}, {"point_index": "1"})


def write_schema1_copy(src, dst):
    """`src` as a file of schema 1 wrote it: serve's time columns without their unit suffix."""
    shutil.copyfile(src, dst)
    with h5py.File(dst, "r+") as f:
        f.attrs["schema_version"] = 1
        for group in ("serve/requests", "serve/timeseries"):
            g = f[group]
            for new, old in vr.RENAMED_IN_SCHEMA_2.items():
                if new in g:
                    g.move(new, old)
            cols = [vr.text(c) for c in g.attrs["columns"]]
            cols = [vr.RENAMED_IN_SCHEMA_2.get(c, c) for c in cols]
            g.attrs["columns"] = np.array(cols, dtype=h5py.string_dtype())


SERVE_RATE_GRID = """description = "report test: GPU x TP x rate"
command = "serve"
[base]
seed = 1
model.id = "meta-llama/Llama-3.1-8B-Instruct"
engine.max_model_len = 8192
workload.synthetic = "poisson"
workload.num_requests = 60
workload.prompt_tokens = "uniform:200:2000"
workload.output_tokens = "uniform:50:400"
slo.ttft = "1s"
slo.tpot = "50ms"
[grid]
"hardware.gpu" = ["h100-sxm", "t4"]
"engine.tp" = [1, 2]
"workload.rate" = [4.0, 16.0, 64.0]
"""


# --- reading the page back ----------------------------------------------------------------

class _Body(html.parser.HTMLParser):
    """The first element inside <body> (its tag and attributes) and its text."""

    def __init__(self):
        super().__init__()
        self.in_body = False
        self.first = None
        self.depth = 0
        self.text = []

    def handle_starttag(self, tag, attrs):
        if tag == "body":
            self.in_body = True
        elif self.in_body and self.first is None:
            self.first = (tag, dict(attrs))
            self.depth = 1
        elif self.first is not None and self.depth > 0:
            self.depth += 1

    def handle_endtag(self, tag):
        if self.first is not None and self.depth > 0:
            self.depth -= 1

    def handle_data(self, data):
        if self.first is not None and self.depth > 0:
            self.text.append(data)


def first_block(page):
    """(tag, attributes, text) of the page body's first element."""
    parser = _Body()
    parser.feed(page)
    tag, attrs = parser.first
    return tag, attrs, " ".join(" ".join(parser.text).split())


# --- the checks ------------------------------------------------------------------------------

class ReportTest(unittest.TestCase):
    tmp = None
    files = {}

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="vramsim_report_test_")
        t = cls.tmp
        runs = {
            "serve": ["serve", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm",
                      "--replicas", "2", "--num-requests", "200"],
            "train": ["train", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm",
                      "--num-gpus", "2", "--pp", "2", "--global-batch", "4", "--seq-len",
                      "1024"],
            "train_tp_pp": ["train", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm",
                            "--num-gpus", "4", "--tp", "2", "--pp", "2", "--global-batch", "8",
                            "--seq-len", "1024"],
            "budget": ["budget", os.path.join(ROOT, "scenarios", "default.toml")],
            "capacity_serve": ["capacity", "serve", os.path.join(ROOT, "scenarios",
                                                                 "default.toml"),
                               "--num-requests", "150", "--slo-ttft-p99", "2s",
                               "--slo-tpot-p99", "100ms", "--precision", "0.1", "--max-runs",
                               "8", "--search-max-num-seqs"],
            "capacity_train": ["capacity", "train", "--model", "meta-llama/Llama-3.2-1B",
                               "--gpu", "h100-sxm", "--seq-len", "2048"],
            "max_micro_batch": ["train", "--model", "meta-llama/Llama-3.2-1B", "--gpu",
                                "h100-sxm", "--seq-len", "2048", "--find-max-micro-batch"],
        }
        for name, args in runs.items():
            out = os.path.join(t, f"{name}.h5")
            subprocess.run([VRAMSIM] + args + ["--out", out], check=True,
                           stdout=subprocess.DEVNULL)
            cls.files[name] = out
        # A serving sweep over GPU x TP x rate, as scenarios/sweeps/serve-gpu-tp-rate.toml but
        # small: a T4 cannot hold the bf16 weights on one GPU, so that configuration has no
        # feasible point.
        grid = os.path.join(t, "serve_rate_grid.toml")
        with open(grid, "w") as f:
            f.write(SERVE_RATE_GRID)
        cls.files["sweep_rate"] = os.path.join(t, "sweep_rate.h5")
        subprocess.run([VRAMSIM, "sweep", grid, "--out", cls.files["sweep_rate"]], check=True,
                       stdout=subprocess.DEVNULL)
        for name, writer in (("compare_serve", write_compare_serve),
                             ("compare_train", write_compare_train),
                             ("sweep_empty", write_sweep_without_metrics)):
            cls.files[name] = os.path.join(t, f"{name}.h5")
            writer(cls.files[name])
        cls.files["serve_schema1"] = os.path.join(t, "serve_schema1.h5")
        write_schema1_copy(cls.files["serve"], cls.files["serve_schema1"])
        for kind in ("serve", "train"):
            cls.files[f"sweep_{kind}"] = os.path.join(t, f"sweep_{kind}.h5")
            write_sweep(cls.files[f"sweep_{kind}"], kind)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    rendered = {}

    def render(self, name, outdir=None):
        """(folder, index.html) of the report of file `name`; once per file unless `outdir`
        asks for a fresh one."""
        if outdir is None and name in self.rendered:
            return self.rendered[name]
        fresh = outdir is not None
        outdir = outdir or os.path.join(self.tmp, f"report_{name}")
        code = report.main([self.files[name], "-o", outdir])
        self.assertEqual(code, 0, f"report.py on {name}")
        with open(os.path.join(outdir, "index.html"), encoding="utf-8") as f:
            out = outdir, f.read()
        if not fresh:
            self.rendered[name] = out
        return out

    def figure_records(self, name):
        """figure_common.SAVED's record of every PNG of the report of file `name`."""
        outdir, _ = self.render(name)
        pngs = sorted(n for n in os.listdir(outdir) if n.endswith(".png"))
        return {png: figure_common.SAVED[os.path.abspath(os.path.join(outdir, png))]
                for png in pngs}

    REPORTED = ("serve", "train", "train_tp_pp", "budget", "capacity_serve", "capacity_train",
                "max_micro_batch", "sweep_serve", "sweep_train", "sweep_rate", "compare_serve",
                "compare_train")

    def test_every_axis_label_of_every_figure_names_its_unit(self):
        checked = 0
        for name in self.REPORTED:
            for png, record in self.figure_records(name).items():
                for ax in record["axes"]:
                    for label in (ax["xlabel"], ax["ylabel"]):
                        if label:
                            checked += 1
                            self.assertRegex(label, r"\([^)]+\)", f"{name}: {png}: {label!r}")
        self.assertGreater(checked, 30)

    def test_no_title_or_label_of_any_figure_is_cut_off_or_runs_into_the_next_panel(self):
        long_name = self.edited_copy("long_name.h5", lambda f: f["budget"].attrs.modify(
            "model", "an-organisation-with-a-long-name/" + "Llama-3.1-70B-Instruct-" * 4 + "v2"))
        self.files["budget_long_name"] = long_name
        for name in self.REPORTED + ("budget_long_name",):
            for png, record in self.figure_records(name).items():
                self.assertEqual(record["cut_off"], [], f"{name}: {png}")
        title = self.figure_records("budget_long_name")["budget.png"]["axes"][0]["title"]
        self.assertIn("\n", title)  # wrapped, not cut
        self.assertIn("Llama-3.1-70B-Instruct", title)

    def test_ttft_and_e2e_share_a_unit_in_a_figure_and_tpot_is_in_ms(self):
        record = self.figure_records("serve")["serve_latency_cdf.png"]
        units = {ax["title"].split(" (")[0]: ax["xlabel"].rsplit("(", 1)[1] for ax in
                 record["axes"]}
        self.assertEqual(units["TPOT"], "ms)")
        self.assertEqual(units["TTFT"], units["E2E latency"])  # the run's E2E p99 is 6.5 s
        self.assertIn(f"TTFT and E2E in {units['TTFT'][:-1]}, TPOT in ms", record["suptitle"])
        record = self.figure_records("sweep_serve")["sweep_pareto_serve.png"]
        xlabels = [ax["xlabel"] for ax in record["axes"]]
        self.assertEqual(xlabels, ["p99 TTFT (s)", "p99 E2E (s)"])  # a point has TTFT >= 2 s

    def assert_picture(self, outdir, png, html, shape):
        path = os.path.join(outdir, png)
        self.assertTrue(os.path.isfile(path), png)
        self.assertGreater(os.path.getsize(path), 8 * 1024, f"{png} is suspiciously small")
        image = matplotlib.image.imread(path)
        self.assertEqual(image.shape[:2], shape, png)
        rgb = image[..., :3].reshape(-1, 3)
        self.assertGreater(len(np.unique(rgb, axis=0)), 16, f"{png} is (nearly) one colour")
        self.assertIn(f'src="{png}"', html, f"index.html does not show {png}")

    def test_a_serve_file_gives_latency_cdfs_kv_use_queues_and_the_budget_bar(self):
        outdir, html = self.render("serve")
        for png, shape in (("serve_latency_cdf.png", WIDE), ("serve_kv_cache.png", WIDE),
                           ("serve_queues.png", TALL), ("budget.png", WIDE)):
            self.assert_picture(outdir, png, html, shape)
        self.assertIn("Summary (/serve/summary)", html)
        self.assertIn("throughput_output_tokens_per_s", html)
        self.assertIn("meta-llama/Llama-3.1-8B on h100-sxm", html)
        self.assertIn("vramsim serve --model", html)  # the command line of the run
        self.assertNotIn("not drawn", html)

    # Issue 15: the page opens with the answer, in numbers the summary holds, before any detail.
    def answer_of(self, name):
        _, page = self.render(name)
        tag, attrs, text = first_block(page)
        self.assertEqual((tag, attrs.get("id")), ("section", "answer"), name)
        return text

    def test_a_serve_report_opens_with_throughput_latency_percentiles_goodput_and_kv(self):
        text = self.answer_of("serve")
        s = vr.summary(self.files["serve"])
        self.assertIn(f"{report.num(s['throughput_requests_per_s'])} requests/s", text)
        self.assertIn(f"{report.num(s['throughput_output_tokens_per_s'])} output tokens/s", text)
        for metric in ("ttft", "tpot"):
            for q in ("p50", "p99"):
                self.assertIn(f"{q} {report.num(s[f'{metric}_{q}_s'] * 1e3)} ms", text)
        self.assertIn(f"Goodput: {report.num(s['goodput_requests_per_s'])} requests/s", text)
        device = s["budget"]["devices"][0]
        self.assertIn(f"KV cache: {report.num(device['kv_cache_tokens'])} tokens", text)
        self.assertIn(f"max concurrency {report.num(device['max_concurrency'])}", text)
        self.assertLess(text.index("Throughput"), text.index("KV cache"))  # serve first

    def test_a_budget_report_opens_with_fits_kv_tokens_concurrency_and_each_device(self):
        text = self.answer_of("budget")
        s = vr.summary(self.files["budget"])
        self.assertTrue(text.startswith("vramsim budget: "), text)
        self.assertIn("Fits: " if s["fits"] else "Does not fit: ", text)
        device = s["devices"][0]
        self.assertIn(f"KV cache: {device['kv_cache_tokens']:,} tokens "
                      f"({device['num_gpu_blocks']:,} blocks)", text)
        self.assertIn(f"max concurrency {report.num(device['max_concurrency'])} requests", text)
        self.assertIn(f"{device['kv_cache_bytes'] / (1 << 30):.2f}", text)  # per device, GiB

    def test_a_train_report_opens_with_fits_step_time_tokens_per_s_mfu_and_peaks_per_stage(
            self):
        text = self.answer_of("train")
        s = vr.summary(self.files["train"])
        self.assertIn("Fits on every pipeline stage" if s["fits"] else "Does not fit", text)
        self.assertIn(f"Step time {report.num(s['step_time_s'])} s, "
                      f"{report.num(s['tokens_per_s'])} tokens/s, MFU {100 * s['mfu']:.1f}%",
                      text)
        self.assertEqual(len(s["devices"]), 2)
        for d in s["devices"]:
            self.assertIn(f"{d['peak_allocated_bytes'] / (1 << 30):.2f}", text)

    def test_compare_capacity_and_sweep_reports_open_with_the_verdict_capacity_and_best_point(
            self):
        self.assertIn("Verdict: a second H100 over NVLink helps", self.answer_of("compare_serve"))
        s = vr.summary(self.files["capacity_serve"])
        self.assertIn(f"Capacity: {report.num(s['max_rate_per_s'], 4)} requests/s",
                      self.answer_of("capacity_serve"))
        text = self.answer_of("capacity_train")
        self.assertIn("Largest micro-batch at seq_len 2,048:", text)
        with h5py.File(self.files["sweep_serve"], "r") as f:
            g = f["sweep/summary"]
            ok = np.array([vr.text(x) == "ok" for x in g["status"][:]])
            tput = np.where(ok, g["throughput_output_tokens_per_s"][:], -1.0)
            best = int(np.argmax(tput))
        text = self.answer_of("sweep_serve")
        self.assertIn(f"Best point (highest output throughput): #{best}", text)
        self.assertIn(f"output tokens/s {report.num(tput[best])}", text)

    def test_the_budget_figure_shows_kv_tokens_and_concurrency(self):
        device = vr.summary(self.files["budget"])["devices"][0]
        ax = self.figure_records("budget")["budget.png"]["axes"][0]
        box = [t for t in ax["texts"] if t.startswith("KV cache:")]
        self.assertEqual(len(box), 1, ax["texts"])
        self.assertIn(f"KV cache: {device['kv_cache_tokens']:,} tokens", box[0])
        self.assertIn(f"= {device['num_gpu_blocks']:,} blocks", box[0])
        self.assertIn(f"max concurrency: {device['max_concurrency']:.3g} requests", box[0])
        self.assertIn(f"max concurrency {device['max_concurrency']:.3g}",
                      ax["title"].replace("\n", " "))
        self.assertIn(f"{device['kv_cache_tokens']:,} tokens",
                      " ".join(t for t in ax["texts"] if "GiB" in t))  # on the KV segment

    def test_the_pipeline_timeline_keeps_1f1b_blocks_visible_beside_a_tp_comm_lane(self):
        records = self.figure_records("train_tp_pp")
        ax = records["train_op_timeline.png"]["axes"][0]
        self.assertEqual(ax["yticklabels"][:3], ["stage 0 compute", "stage 0 TP comm",
                                                 "stage 0 p2p sends"])
        self.assertIn("stage 1 compute", ax["yticklabels"])
        # Eight micro-batches, each a forward and a backward block per stage and step, numbered.
        with h5py.File(self.files["train_tp_pp"], "r") as f:
            self.assertIn("tp-comm", {vr.text(k) for k in f["train/op_timeline/kind"][:]})
        numbers = [t for t in ax["texts"] if t.isdigit()]
        self.assertEqual(sorted(set(numbers)), [str(i) for i in range(8)])
        self.assertEqual(len(numbers), 8 * 2 * 2 * 2)
        self.assertIn("TP collective", ax["legend"])
        titles = [records[f"train_memory_device{d}.png"]["axes"][0]["title"] for d in (0, 1)]
        self.assertTrue(titles[0].startswith("Pipeline stage 0:"), titles)
        self.assertEqual(records["train_step_split.png"]["axes"][0]["yticklabels"],
                         ["stage 0", "stage 1"])
        for record in records.values():
            for a in record["axes"]:
                for label in a["yticklabels"] + [a["title"]]:
                    self.assertNotRegex(label, r"\b[Dd]ev(ice)? \d", label)

    def test_a_micro_batch_pass_and_its_tp_collectives_merge_into_one_block(self):
        # Stage 0: mb0 forward (two layers, a TP collective between them), then mb0 backward;
        # stage 1: mb0 forward. Times in seconds.
        kinds = ["fwd", "tp-comm", "fwd", "bwd", "tp-comm", "fwd"]
        ops = ["fwd L0 mb0", "tp-comm L0 fwd mb0", "fwd L1 mb0", "bwd L1 mb0",
               "tp-comm L1 bwd mb0", "fwd L2 mb0"]
        phases = np.array([figures_train._phase(k, o) for k, o in zip(kinds, ops)])
        self.assertEqual(phases.tolist(), ["fwd", "fwd", "fwd", "bwd", "bwd", "fwd"])
        start = np.array([0.0, 1.0, 1.5, 3.0, 4.0, 2.0])
        end = np.array([1.0, 1.5, 3.0, 4.0, 4.5, 3.0])
        device = np.array([0, 0, 0, 0, 0, 1])
        mb = np.zeros(6, np.int64)
        first, b0, b1 = figures_train._blocks(start, end, (device, mb, phases), np.ones(6, bool))
        self.assertEqual(first.tolist(), [0, 3, 5])
        self.assertEqual(list(zip(b0.tolist(), b1.tolist())), [(0.0, 3.0), (3.0, 4.5), (2.0, 3.0)])

    def test_a_serve_file_of_schema_1_is_read_with_its_old_column_names(self):
        with vr.Results(self.files["serve_schema1"]) as r:
            self.assertEqual(r.schema_version, 1)
            requests = r.group("serve/requests")
            self.assertNotIn("arrival_ns", requests)
            self.assertTrue(vr.has_columns(requests, "arrival_ns", "finish_ns"))
            with vr.Results(self.files["serve"]) as current:
                self.assertEqual(current.schema_version, vr.SCHEMA_VERSION)
                np.testing.assert_array_equal(
                    vr.column(requests, "arrival_ns"),
                    vr.column(current.group("serve/requests"), "arrival_ns"))
        outdir, html = self.render("serve_schema1")
        for png, shape in (("serve_latency_cdf.png", WIDE), ("serve_queues.png", TALL)):
            self.assert_picture(outdir, png, html, shape)
        self.assertNotIn("not drawn", html)

    def test_a_train_file_gives_memory_by_category_per_device_the_op_timeline_and_step_split(
            self):
        outdir, html = self.render("train")
        for png, shape in (("train_memory_device0.png", WIDE),
                           ("train_memory_device1.png", WIDE),
                           ("train_op_timeline.png", WIDE), ("train_step_split.png", WIDE)):
            self.assert_picture(outdir, png, html, shape)
        self.assertIn("Devices (/train/devices)", html)
        self.assertNotIn("not drawn", html)

    def test_a_budget_file_gives_one_stacked_bar_per_device(self):
        outdir, html = self.render("budget")
        self.assert_picture(outdir, "budget.png", html, WIDE)
        self.assertIn("kv_cache_bytes", html)

    def test_a_capacity_serve_file_gives_latency_against_rate_and_the_max_num_seqs_search(self):
        outdir, html = self.render("capacity_serve")
        for png in ("capacity_serve_latency.png", "capacity_serve_max_num_seqs.png"):
            self.assert_picture(outdir, png, html, WIDE)
        self.assertIn("Every simulation (/capacity/probes)", html)
        self.assertIn("max_rate_per_s", html)
        self.assertIn("vramsim capacity serve", html)
        self.assertNotIn("not drawn", html)

    def test_a_capacity_train_file_gives_bars_per_policy_and_memory_per_probe(self):
        outdir, html = self.render("capacity_train")
        for png in ("capacity_train_policies.png", "capacity_train_memory.png"):
            self.assert_picture(outdir, png, html, WIDE)
        self.assertIn("Policies (/capacity/policies)", html)
        self.assertNotIn("not drawn", html)

    def test_a_find_max_micro_batch_file_gives_memory_per_probe_and_bars_per_policy(self):
        outdir, html = self.render("max_micro_batch")
        for png in ("max_micro_batch_policies.png", "max_micro_batch_memory.png"):
            self.assert_picture(outdir, png, html, WIDE)
        self.assertIn("Every simulation (/max_micro_batch/probes)", html)
        self.assertIn("meta-llama/Llama-3.2-1B on h100-sxm", html)
        self.assertNotIn("not drawn", html)

    def test_compare_files_give_verdict_bars_in_both_modes(self):
        outdir, html = self.render("compare_serve")
        self.assert_picture(outdir, "compare_verdict.png", html, TALL)
        self.assertIn("2 replicas give 1.93x goodput", html)
        outdir, html = self.render("compare_train")
        self.assert_picture(outdir, "compare_verdict.png", html, TALL)
        self.assertIn("Not in this file: tokens_per_s, scaling_efficiency.", html)

    def test_compare_train_without_a_fitting_gpu_says_so_instead_of_zero_bars(self):
        _, html = self.render("compare_train")
        self.assertIn("One GPU does not fit, so the ratios to it are undefined.", html)
        record = self.figure_records("compare_train")["compare_verdict.png"]
        panels = {ax["title"].split("\n")[0]: ax for ax in record["axes"]}
        speedup = panels["Speed-up over one GPU"]
        self.assertIn("one GPU does not fit:\nno ratio to it", speedup["texts"])
        self.assertNotIn(" 0", speedup["texts"])
        step = panels["Step time"]["texts"]
        self.assertEqual(step[:2], [" does not fit", " does not fit"])  # 1 GPU, DDP x2
        self.assertEqual(step[2], " 2.4")
        for ax in record["axes"]:
            self.assertRegex(ax["xlabel"], r"\([^)]+\)")
        self.assertEqual(record["cut_off"], [])

    def test_sweep_files_give_pareto_fronts_and_name_the_front_they_cannot_draw(self):
        outdir, html = self.render("sweep_serve")
        self.assert_picture(outdir, "sweep_pareto_serve.png", html, WIDE)
        self.assertIn("1 of 24 points are infeasible or failed", html)
        self.assertIn("not a training sweep", html)
        self.assertIn("the sweep varies no arrival rate or concurrency", html)
        outdir, html = self.render("sweep_train")
        self.assert_picture(outdir, "sweep_pareto_train.png", html, WIDE)
        self.assertIn("not a serving sweep", html)
        outdir, html = self.render("sweep_empty")
        self.assertFalse(any(n.endswith(".png") for n in os.listdir(outdir)))
        self.assertEqual(html.count("not drawn"), 3)  # the load figure and both fronts

    def test_a_serving_sweep_over_the_rate_draws_latency_and_throughput_per_gpu_and_tp(self):
        outdir, html = self.render("sweep_rate")
        self.assert_picture(outdir, "sweep_serve_load.png", html, TALL)
        axes = self.figure_records("sweep_rate")["sweep_serve_load.png"]["axes"]
        self.assertEqual([a["xlabel"] for a in axes], ["arrival rate (requests/s)"] * 4)
        self.assertEqual([a["ylabel"].split(" (")[0] for a in axes],
                         ["output throughput", "goodput", "TTFT", "TPOT"])
        self.assertEqual(axes[3]["ylabel"], "TPOT (ms)")
        self.assertEqual(axes[0]["legend"], ["gpu=h100-sxm tp=1", "gpu=h100-sxm tp=2",
                                             "gpu=t4 tp=2"])
        self.assertEqual([a["title"] for a in axes[2:]], ["TTFT p50 (dashed) and p99 (solid)",
                                                          "TPOT p50 (dashed) and p99 (solid)"])
        self.assertIn("No feasible point: gpu=t4 tp=1.", html)
        self.assertIn("Best point (highest output throughput): #", first_block(html)[2])

    def test_pareto_points_are_labelled_with_their_values_and_settings(self):
        texts = self.figure_records("sweep_train")["sweep_pareto_train.png"]["axes"][0]["texts"]
        with h5py.File(self.files["sweep_train"], "r") as f:
            g = f["sweep/summary"]
            ok = np.array([vr.text(v) == "ok" for v in g["status"][:]])
            gpu = [vr.text(v) for v in g["gpu"][:]]
            tp = [vr.text(v) for v in g["tp"][:]]
            x = g["peak_allocated_bytes"][:] / (1 << 30)
            y = g["step_time_s"][:]
        ids = np.flatnonzero(ok)
        front = ids[figures_sweep.pareto_front(x[ok], y[ok], False)]
        self.assertGreater(len(front), 1)
        for i in front:
            self.assertIn(f"#{i} gpu={gpu[i]} tp={tp[i]}\n{x[i]:.1f} GiB, {y[i]:.3g} s", texts)
        self.assertEqual([t for t in texts if t.startswith("#") and "GiB" not in t], [])

    def test_the_pareto_front_keeps_exactly_the_undominated_points(self):
        # Latency (lower is better) and throughput (higher is better) of five points: point 1
        # is beaten by point 0 (faster and more throughput), point 3 by point 2.
        x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
        y = np.array([10.0, 9.0, 20.0, 15.0, 30.0])
        self.assertEqual(figures_sweep.pareto_front(x, y, True).tolist(), [0, 2, 4])
        # Memory and step time, both lower is better: only points 0, 1 and 3 are undominated.
        self.assertEqual(figures_sweep.pareto_front(x, np.array([5.0, 4.0, 4.0, 1.0, 2.0]),
                                                    False).tolist(), [0, 1, 3])

    def test_envelope_downsampling_keeps_the_peaks_and_at_most_the_asked_points(self):
        y = np.zeros(100_000)
        y[12_345] = 7.0
        y[99_999] = -3.0
        keep = vr.envelope_indices(y, 1000)
        self.assertLessEqual(len(keep), 1002)
        self.assertIn(12_345, keep.tolist())
        self.assertIn(99_999, keep.tolist())

    def test_two_renders_of_one_file_are_byte_identical(self):
        a, _ = self.render("serve", os.path.join(self.tmp, "same_a"))
        b, _ = self.render("serve", os.path.join(self.tmp, "same_b"))
        names = sorted(os.listdir(a))
        self.assertEqual(names, sorted(os.listdir(b)))
        _, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
        self.assertEqual((mismatch, errors), ([], []))

    def test_the_page_is_self_contained(self):
        _, html = self.render("serve")
        self.assertNotIn("<script", html.lower())
        self.assertNotIn("http://", html)
        self.assertNotIn("https://", html)

    def test_vramsim_report_writes_the_page_and_names_a_missing_file_with_exit_code_2(self):
        outdir = os.path.join(self.tmp, "cli")
        run = subprocess.run([VRAMSIM, "report", self.files["budget"], "-o", outdir],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertTrue(os.path.isfile(os.path.join(outdir, "index.html")))
        self.assertTrue(os.path.isfile(os.path.join(outdir, "budget.png")))
        missing = os.path.join(self.tmp, "no_such_results.h5")
        run = subprocess.run([VRAMSIM, "report", missing, "-o", outdir], capture_output=True,
                             text=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn(missing, run.stderr)

    def test_a_file_that_is_not_hdf5_is_bad_input(self):
        bad = os.path.join(self.tmp, "not_hdf5.h5")
        with open(bad, "w") as f:
            f.write("not an HDF5 file\n")
        run = subprocess.run([VRAMSIM, "report", bad, "-o", os.path.join(self.tmp, "bad")],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("cannot open results file", run.stderr)


    # Issue 18: a file report.py cannot read is bad input: one line on stderr naming the file
    # and what is wrong, exit 2, no Python traceback.
    def report_of(self, path, name):
        return subprocess.run([VRAMSIM, "report", path, "-o", os.path.join(self.tmp, name)],
                              capture_output=True, text=True)

    def assert_one_line_refusal(self, run, *parts):
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        self.assertNotIn("Traceback", run.stderr)
        for part in parts:
            self.assertIn(part, run.stderr)

    def edited_copy(self, name, edit):
        path = os.path.join(self.tmp, name)
        shutil.copyfile(self.files["budget"], path)
        with h5py.File(path, "r+") as f:
            edit(f)
        return path

    def test_an_hdf5_file_that_is_not_a_vramsim_results_file_is_bad_input(self):
        path = os.path.join(self.tmp, "foreign.h5")
        with h5py.File(path, "w") as f:
            f.create_dataset("x", data=np.arange(3))
        self.assert_one_line_refusal(self.report_of(path, "foreign"), "foreign.h5",
                                     "not a vramsim results file")

    def test_a_schema_version_from_the_future_or_not_a_number_is_bad_input(self):
        future = self.edited_copy("future.h5", lambda f: f.attrs.modify(
            "schema_version", vr.SCHEMA_VERSION + 1))
        self.assert_one_line_refusal(self.report_of(future, "future"),
                                     f"has schema_version {vr.SCHEMA_VERSION + 1}")
        def as_word(f):
            del f.attrs["schema_version"]
            f.attrs["schema_version"] = "two"
        word = self.edited_copy("word.h5", as_word)
        self.assert_one_line_refusal(self.report_of(word, "word"), "not an integer")

    def test_a_dataset_of_the_wrong_type_or_shape_is_bad_input(self):
        def retype(f):
            g = f["budget"]
            name = vr.columns(g)[0]
            del g[name]
            g.create_dataset(name, data=np.zeros((2, 2)))
        path = self.edited_copy("retyped.h5", retype)
        self.assert_one_line_refusal(self.report_of(path, "retyped"), "retyped.h5",
                                     "expected a 1-D column dataset")

    def test_a_missing_column_is_bad_input(self):
        def drop(f):
            g = f["budget"]
            for name in vr.columns(g):
                del g[name]
        path = self.edited_copy("dropped.h5", drop)
        run = self.report_of(path, "dropped")
        self.assertIn(run.returncode, (0, 2), run.stderr)
        self.assertNotIn("Traceback", run.stderr)

    def test_a_corrupted_file_is_bad_input(self):
        path = os.path.join(self.tmp, "corrupt.h5")
        with open(self.files["serve"], "rb") as f:
            data = bytearray(f.read())
        # Keep the superblock and root group; overwrite the rest with garbage.
        for i in range(4096, len(data)):
            data[i] = (i * 131) & 0xFF
        with open(path, "wb") as f:
            f.write(data)
        run = self.report_of(path, "corrupt")
        self.assert_one_line_refusal(run, "corrupt.h5")

    def test_a_folder_is_named_as_a_folder(self):
        run = self.report_of(self.tmp, "folder")
        self.assert_one_line_refusal(run, "is a directory, not a results file")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_report.py PATH/TO/vramsim [unittest options]")
    VRAMSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
