#!/usr/bin/env bash
# Configures and builds vramsim into ./build (Release). Extra arguments go to cmake's configure
# step, e.g. scripts/build.sh -DVRAMSIM_SANITIZE=ON. BUILD_DIR overrides the folder.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
launcher=()
# NOTE: ccache is optional (not installed by setup.sh); where present it makes rebuilds and
# parallel checkouts cheap. CCACHE_BASEDIR lets checkouts at different paths share hits.
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}"
fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "${launcher[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
