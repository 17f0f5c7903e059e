#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (AddressSanitizer + UndefinedBehaviorSanitizer)
# into ./build-fuzz and runs each for a bounded time, then prints executions and crashes per
# target. Usage: scripts/fuzz.sh [seconds per target (default 60)] [target ...]
#
# Needs clang and libFuzzer: `apt-get install clang libclang-rt-14-dev` (Debian 12; libFuzzer
# is only a Recommends of clang, so --no-install-recommends leaves it out). Not run by CI.
#
# Seeds are generated at every run into build-fuzz/seeds/<target>/ from the shipped files
# (scenarios/, topologies/, tests/hardware/data/) and from the first lines of the public traces
# and configs in ../shared/data (never copied into the repository). What a target finds grows
# build-fuzz/corpus/<target>/; crashing inputs land in build-fuzz/artifacts/<target>/. Every
# crash fixed becomes a regression test in the parser's test folder.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
build_dir="${BUILD_DIR:-build-fuzz}"
shared="$(cd .. && pwd)/shared/data"

for tool in clang clang++; do
  command -v "$tool" >/dev/null || { echo "fuzz: $tool not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }
done
if ! clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a | grep -q /; then
  echo "fuzz: libFuzzer not found (apt-get install libclang-rt-14-dev)" >&2
  exit 1
fi

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}"
fi
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DVRAMSIM_FUZZ=ON -DVRAMSIM_BUILD_TESTS=OFF -DVRAMSIM_ENABLE_CUDA=OFF "${launcher[@]}" >/dev/null
cmake --build "$build_dir" --target fuzz_all -j "$(nproc)"

# seeds <target> <file>...: copies whole files; head_seeds <target> <lines> <file>...: the header
# and first lines of each (traces are large).
seeds() {
  local t="$1"; shift
  mkdir -p "$build_dir/seeds/$t"
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$build_dir/seeds/$t/$(basename "$f")"; done
  return 0
}
head_seeds() {
  local t="$1" n="$2"; shift 2
  mkdir -p "$build_dir/seeds/$t"
  for f in "$@"; do [ -f "$f" ] && head -n "$n" "$f" >"$build_dir/seeds/$t/$(basename "$f")"; done
  return 0
}
rm -rf "$build_dir/seeds"
head_seeds fuzz_azure_csv 40 "$shared"/traces/AzureLLMInferenceTrace_*.csv
head_seeds fuzz_mooncake_jsonl 10 "$shared"/traces/*.jsonl
head_seeds fuzz_plain_csv 40 "$shared"/traces/vllm-bench/*.csv "$shared"/traces/*_stats_*.csv
seeds fuzz_hf_config scenarios/models/*.json "$shared"/models/*.json
seeds fuzz_serving_scenario scenarios/*.toml
seeds fuzz_training_scenario scenarios/training/*.toml
seeds fuzz_topology topologies/devices/*.toml topologies/nodes/*.toml scenarios/training/cluster-*.toml
seeds fuzz_calibration_profile tests/hardware/data/*.json
seeds fuzz_sweep_grid scenarios/sweeps/*.toml

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_azure_csv fuzz_mooncake_jsonl fuzz_plain_csv fuzz_hf_config fuzz_serving_scenario
           fuzz_training_scenario fuzz_topology fuzz_calibration_profile fuzz_sweep_grid)
fi

summary=()
failed=0
for t in "${targets[@]}"; do
  mkdir -p "$build_dir/corpus/$t" "$build_dir/artifacts/$t" "$build_dir/seeds/$t"
  log="$build_dir/artifacts/$t/fuzz.log"
  before=$(find "$build_dir/artifacts/$t" -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' | wc -l)
  set +e
  "$build_dir/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build_dir/artifacts/$t/" \
    "$build_dir/corpus/$t" "$build_dir/seeds/$t" >"$log" 2>&1 &
  pid=$!
  wait "$pid"
  rc=$?
  set -e
  # The target's scratch folder (fuzz/fuzz_support.hpp), named after its pid.
  rm -rf "/dev/shm/vramsim-fuzz-$pid" "${TMPDIR:-/tmp}/vramsim-fuzz-$pid"
  after=$(find "$build_dir/artifacts/$t" -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' | wc -l)
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  line=$(printf '%-26s %12s executions  %d new crash file(s)  exit %d' "$t" "${execs:-?}" $((after - before)) "$rc")
  summary+=("$line")
  echo "$line"
  if [ "$rc" -ne 0 ]; then
    failed=1
    grep -m1 -E 'ERROR: |runtime error|terminate called' "$log" | sed 's/^/    /' || true
    echo "    log: $log"
  fi
done
echo "fuzz summary (${seconds}s per target):"
printf '  %s\n' "${summary[@]}"
exit "$failed"
