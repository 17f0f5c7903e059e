#!/usr/bin/env bash
# Downloads the public request traces vramsim reads (scenarios/traces/README.md) from their
# upstream repositories at pinned commits into scenarios/traces/data/ (gitignored), and checks
# each file's sha256 against the values in the shared data's SOURCES.md. The vllm-bench CSVs are
# derived from LLMServingSim's requests.jsonl exactly as the shared copies were (python3).
# Needs curl, sha256sum and python3. Not run in CI (no network there). The licence texts are
# not downloaded: ship each repository's LICENSE with any copy (see the README).
set -euo pipefail
cd "$(dirname "$0")/.."
out="scenarios/traces/data"
mkdir -p "$out/vllm-bench"
# A mirror with the same <owner>/<repo>/<commit>/<path> layout may stand in (e.g. file:///...).
raw="${VRAMSIM_TRACES_BASE_URL:-https://raw.githubusercontent.com}"

AZURE="Azure/AzurePublicDataset/b469a113cedca53ddc3bdea71a143dc4b7d8700c"
MOONCAKE="kvcache-ai/Mooncake/3b5a594133958449a1feaf1c9e0fc1b553e34a28"
VIDUR="microsoft/vidur/7d47513363ec447a741ac5e47241580b47724fbf"
SARATHI="microsoft/sarathi-serve/72339db5b120614033b317880ad3a05a5e4c9415"
LLMSERVINGSIM="casys-kaist/LLMServingSim/5daddb21a545658d5150b535712d0494584b5278"

failures=0

# check FILE SHA256: compares, prints the outcome, counts a mismatch.
check() {
  local file="$1" want="$2" got
  got="$(sha256sum "$file" | cut -d' ' -f1)"
  if [[ "$got" == "$want" ]]; then
    echo "ok       $file"
  else
    echo "MISMATCH $file: sha256 $got, expected $want" >&2
    failures=$((failures + 1))
  fi
}

# fetch URL_PATH DEST SHA256: downloads (unless DEST already has the right hash) and checks.
fetch() {
  local url="$raw/$1" dest="$2" want="$3"
  if [[ -f "$dest" ]] && [[ "$(sha256sum "$dest" | cut -d' ' -f1)" == "$want" ]]; then
    echo "cached   $dest"
    return
  fi
  curl --fail --location --silent --show-error --retry 3 -o "$dest.part" "$url"
  mv "$dest.part" "$dest"
  check "$dest" "$want"
}

fetch "$AZURE/data/AzureLLMInferenceTrace_code.csv" "$out/AzureLLMInferenceTrace_code.csv" \
  54e9a6d2a4bd06ba1e060304b900abbc74cbea53de96506e60fe5bb4f2277fb6
fetch "$AZURE/data/AzureLLMInferenceTrace_conv.csv" "$out/AzureLLMInferenceTrace_conv.csv" \
  2f1e5b666d4e3055fdbba98598ce2ec307767b9064e03e2fa46676dbcc7d0bf8
fetch "$MOONCAKE/FAST25-release/traces/conversation_trace.jsonl" "$out/conversation_trace.jsonl" \
  b8cbb061a85206d729d91cdc2981f43c9e0d99209dce588d3af5f7934408b9df
fetch "$MOONCAKE/FAST25-release/traces/synthetic_trace.jsonl" "$out/mooncake_synthetic_trace.jsonl" \
  bd070915a98fc0ed264d7cfef2ce746002eb3076a695ec31ba2674c0111ec131
fetch "$VIDUR/data/processed_traces/arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv" \
  "$out/arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv" \
  9d3580538d915ca75e4aaaa54590b42dbb17abc6d74c8913310cf07c232adcdc
fetch "$SARATHI/data/processed_traces/sharegpt_8k_filtered_stats_llama2_tokenizer.csv" \
  "$out/sharegpt_8k_filtered_stats_llama2_tokenizer.csv" \
  6d6c296302a853e2669a674a96f269283e60c57e60363bd450588a1066919f9f

# vllm-bench: upstream requests.jsonl (sha256 of the upstream blob) -> derived CSV (sha256 of the
# shared copy). Derivation: sort by queued_ts; arrival_s = queued_ts - first, "%.6f".
derive_vllm_bench() {
  python3 - "$1" "$2" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
rows.sort(key=lambda r: r["queued_ts"])
t0 = rows[0]["queued_ts"]
with open(sys.argv[2], "w", newline="\n") as out:
    out.write("arrival_s,prompt_tokens,output_tokens\n")
    for r in rows:
        out.write("%.6f,%d,%d\n" % (r["queued_ts"] - t0, r["input_toks"], r["output_toks"]))
PY
}
while read -r upstream name jsonl_sha csv_sha; do
  jsonl="$out/vllm-bench/$name.requests.jsonl"
  fetch "$LLMSERVINGSIM/bench/examples/$upstream/vllm/requests.jsonl" "$jsonl" "$jsonl_sha"
  derive_vllm_bench "$jsonl" "$out/vllm-bench/$name.csv"
  check "$out/vllm-bench/$name.csv" "$csv_sha"
done <<'LIST'
RTX4090/Llama-3.1-8B rtx4090_llama-3.1-8b 5a6f2a0b09d5eb84bd75b30ed625d883c22b4bcc0a839cd1128ae42f74ecc90d 8d9532e6cb54de1ffb45b0f53941d5ececf2161e082caa77ba43259e2a4e562f
RTXPRO6000/Llama-3.1-8B rtxpro6000_llama-3.1-8b 0175b31b0ddc02b97eb6da1410dc80fc5900b8785c988e90cacee1021d644682 5985d2cfbd5aa41aa9ad527231efde4b61d1440b2435962ffa3f4a56be95b127
RTXPRO6000/Qwen3-32B rtxpro6000_qwen3-32b_tp2 7751686bb9f927f5cd39adf901b2d0755b8f1a1182561c3df5446c927f95342f c2a8659156b51a91c972da35157ccc8849be3d826c6fafd91401fe01c5ce8875
RTXPRO6000/Qwen3-30B-A3B-Instruct-2507 rtxpro6000_qwen3-30b-a3b_dp2ep bde98fa878f59f1b3b8b8f9b3b09f8e1ae36be6a8f56040b9a80a97d00a7dc7b fe619abac2c597290491ec3c744801e3127d7ac1e9519e91632be525daf4c0a3
LIST

if (( failures > 0 )); then
  echo "$failures file(s) failed the sha256 check" >&2
  exit 1
fi
echo "all traces in $out match their recorded sha256 (SOURCES.md; vllm-bench: the shared copies)"
