#!/usr/bin/env bash
# Builds vramsim-calibrate and vramsim, calibrates this machine's GPU(s) and writes, into OUT_DIR:
#   <device-id>.json          the calibration profile
#   calibration.log           nvidia-smi, the build's configure summary, every measurement line
#   report.txt / report.json  vramsim calibrate-report of the profile (measured vs datasheet)
#   torch-quick/, torch-full/ analysis/validation/torch_memory_check.py (PyTorch memory against
#                             vramsim train/budget), when `python3 -c "import torch"` works and
#                             sees the GPU; TORCH_CHECK=0 skips it, TORCH_MODEL picks the full
#                             run's model (default meta-llama/Llama-3.1-8B, layers scaled to fit)
#
#   kernels/run_calibration.sh OUT_DIR [DEVICE_ID] [extra vramsim-calibrate arguments...]
#
# DEVICE_ID names topologies/devices/<id>.toml (h200, h100-sxm, ...); without it the GPU's name
# is mapped for the common parts. BUILD_DIR (default build-calib) and JOBS override the build.
# Example, on an H200 machine:  kernels/run_calibration.sh /tmp/calib h200
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir="${1:?usage: kernels/run_calibration.sh OUT_DIR [DEVICE_ID] [args...]}"
shift
mkdir -p "$out_dir"
log="$out_dir/calibration.log"
: > "$log"

device_id="${1:-}"
[[ $# -gt 0 ]] && shift
if [[ -z "$device_id" ]]; then
  name="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 || true)"
  case "$name" in
    *H200*) device_id=h200 ;;
    *H100*PCIe*) device_id=h100-pcie ;;
    *H100*) device_id=h100-sxm ;;
    *B200*) device_id=b200 ;;
    *A100*80GB*PCIe*) device_id=a100-pcie-80g ;;
    *A100*80GB*) device_id=a100-sxm-80g ;;
    *A100*) device_id=a100-sxm-40g ;;
    *L40S*) device_id=l40s ;;
    *) echo "unknown GPU '$name': pass DEVICE_ID (a topologies/devices id)" >&2; exit 2 ;;
  esac
fi

{
  echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) kernels/run_calibration.sh $out_dir $device_id $*"
  echo "== git $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  nvidia-smi || true
  nvidia-smi topo -m || true
} >> "$log" 2>&1

build_dir="${BUILD_DIR:-build-calib}"
jobs="${JOBS:-$(nproc)}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DVRAMSIM_BUILD_TESTS=OFF 2>&1 \
  | grep 'vramsim:' | tee -a "$log"
cmake --build "$build_dir" --target vramsim-calibrate vramsim -j "$jobs" >> "$log" 2>&1 \
  || { tail -50 "$log"; exit 1; }

driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1 || true)"
profile="$out_dir/$device_id.json"
"$build_dir/vramsim-calibrate" --device-id "$device_id" --out "$profile" \
  --driver-version "$driver" "$@" 2>&1 | tee -a "$log"
"$build_dir/vramsim" calibrate-report "$profile" | tee "$out_dir/report.txt"
"$build_dir/vramsim" calibrate-report "$profile" --format json > "$out_dir/report.json"
echo "wrote $profile, $log, $out_dir/report.txt"

# Ground truth for the memory model (analysis/validation/README.md). A failure here is logged and
# does not fail the calibration: the profile above is already written.
if [[ "${TORCH_CHECK:-1}" == 0 ]]; then
  echo "torch memory check: skipped (TORCH_CHECK=0)" | tee -a "$log"
elif ! python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" \
    >> "$log" 2>&1; then
  echo "torch memory check: skipped (python3 cannot import torch or sees no GPU)" | tee -a "$log"
else
  check=(python3 analysis/validation/torch_memory_check.py --vramsim "$build_dir/vramsim"
         --gpu "$device_id")
  for run in quick full; do
    if [[ $run == quick ]]; then
      args=(--quick)
    else
      args=(--model "${TORCH_MODEL:-meta-llama/Llama-3.1-8B}" --micro-batch 1 --seq-len 4096)
    fi
    echo "== torch memory check ($run): ${check[*]} ${args[*]} --out $out_dir/torch-$run" \
      | tee -a "$log"
    rc=0
    timeout "${TORCH_TIMEOUT:-900}" "${check[@]}" "${args[@]}" --out "$out_dir/torch-$run" \
      2>&1 | tee -a "$log" || rc=$?
    echo "torch memory check ($run): exit $rc" | tee -a "$log"
  done
fi
