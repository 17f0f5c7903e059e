#!/usr/bin/env bash
# Configures and builds vramsim into ./build (Release). Extra arguments go to cmake's configure
# step, e.g. scripts/build.sh -DVRAMSIM_SANITIZE=ON. BUILD_DIR overrides the folder.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
