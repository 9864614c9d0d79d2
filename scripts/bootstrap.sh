#!/usr/bin/env bash
# Installs everything cudal2 needs on a fresh Debian/Ubuntu machine:
#   - Debian packages: compiler, CMake, CLI11, nlohmann-json, fmt, GoogleTest, SQLite, Python venv,
#     clang-format and clang-tidy
#   - a project-local Python venv (.venv) with nvidia-cutlass==4.2.0.0 (its wheel carries CUTLASS's
#     C++ headers; cmake/Cutlass.cmake finds them there unless CUTLASS_DIR points elsewhere)
# The CUDA toolkit (nvcc 13, cuBLAS) is expected at /usr/local/cuda or on PATH: it is not a Debian
# package of the version we need, so we check for it and say so if it is missing.
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config libcli11-dev nlohmann-json3-dev libfmt-dev
          libgtest-dev libgmock-dev libsqlite3-dev python3-venv python3-pip
          libcpp-httplib-dev  # HTTP client and server: the LLM proposer and `cudal2 serve`
          clang-format  # .ci/run fails on formatting drift (scripts/check_format.sh)
          clang-tidy  # and on any clang-tidy finding in src/ (scripts/check_tidy.sh, .clang-tidy)
          chromium fonts-dejavu-core)  # chromium: headless screenshot test of `cudal2 report`
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "bootstrap: error: the CUDA toolkit (nvcc 13.x) was not found on PATH or in /usr/local/cuda" >&2
  exit 1
fi

CUTLASS_PIN="nvidia-cutlass==4.2.0.0"
if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv"
  python3 -m venv .venv
fi
# --no-compile: pip would byte-compile every module it installs (PyTorch's alone are some 7,700,
# about 40 s of one core); Python compiles the few hundred a run imports when it first imports them.
if ! .venv/bin/python -c "import cutlass_library" >/dev/null 2>&1 ||
   [ "$(.venv/bin/python -m pip show nvidia-cutlass 2>/dev/null | awk '/^Version/{print $2}')" != "4.2.0.0" ]; then
  echo "bootstrap: installing $CUTLASS_PIN into .venv"
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-compile --no-deps "$CUTLASS_PIN"
fi
# The Python package (python/: torch.ops.cudal2.mm) and `cudal2 report`: PyTorch (PyPI's wheel,
# about 2 minutes and 5 GB with its CUDA libraries), matplotlib, pytest, setuptools for `pip install ./python`.
PY_PINS=("torch==2.15.0" "matplotlib==3.11.2" "numpy" "pytest" "setuptools>=70.1")
if ! .venv/bin/python -c "import torch, matplotlib, pytest, setuptools" >/dev/null 2>&1; then
  echo "bootstrap: installing ${PY_PINS[*]} into .venv"
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-compile "${PY_PINS[@]}"
fi
echo "bootstrap: ok"
