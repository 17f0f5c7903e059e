#!/usr/bin/env bash
# Installs what vramsim needs to build and test, from Debian 12 packages. Idempotent: packages
# already present are not touched, and apt is not called at all when nothing is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libhdf5-dev          # HDF5 C and C++ APIs (results files)
  libeigen3-dev        # Eigen
  libcli11-dev         # CLI11 (command line)
  catch2               # Catch2 2.13 (tests)
  libfmt-dev           # fmt 9
  nlohmann-json3-dev   # nlohmann-json (Hugging Face config.json)
  libcurl4-openssl-dev # libcurl: model ids fetched from the Hugging Face hub
  libtomlplusplus-dev  # toml++ (scenario and topology files)
  libopenmpi-dev openmpi-bin  # MPI: spreading `vramsim sweep` over ranks (optional in the build)
  python3-h5py python3-matplotlib python3-pandas  # analysis/ and `vramsim report`
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
else
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo); else
      echo "setup: need root (or sudo) to apt-get install: ${missing[*]}" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The results reader, `import vramsim_results`, for the system Python: this checkout's
# analysis/vramsim_results.py copied into that Python's site-packages (its purelib directory,
# /usr/local/lib/python3.X/dist-packages on Debian) when writable, else into the user's site
# directory. Copied only when it differs, so a second run changes nothing.
python=/usr/bin/python3
module="$(cd "$(dirname "$0")/.." && pwd)/analysis/vramsim_results.py"
site_dir="$("$python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
if ! { mkdir -p "$site_dir" 2>/dev/null && [ -w "$site_dir" ]; }; then
  site_dir="$("$python" -m site --user-site)"
  mkdir -p "$site_dir"
fi
if ! cmp -s "$module" "$site_dir/vramsim_results.py"; then
  install -m 0644 "$module" "$site_dir/vramsim_results.py"
  echo "setup: installed vramsim_results into $site_dir"
fi
(cd / && "$python" -c 'import vramsim_results') || {
  echo "setup: $python cannot import vramsim_results from $site_dir" >&2
  exit 1
}
