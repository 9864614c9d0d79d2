#!/usr/bin/env bash
# ctest `python_package` (label cpu): builds the pip package from python/ around the freshly built
# runtime library, installs it into a temporary folder and runs the pytest suite against that
# install: CPU tests (argument checks, the fake implementation, torch.compile tracing), the report
# tests (headless Chromium) and, where there is a GPU, the GPU tests.
#   run_ctest.sh PYTHON RUNTIME_LIB CLI
# Exit 77 (ctest: skipped) when PYTHON lacks torch (run scripts/bootstrap.sh), unless $CI is set.
set -euo pipefail
py="$1" lib="$(realpath "$2")" cli="$3"
case "$py" in */*) py="$(cd "$(dirname "$py")" && pwd)/$(basename "$py")" ;; esac  # keep a venv symlink
here="$(cd "$(dirname "$0")" && pwd)"
src="$(dirname "$here")"
if ! "$py" -c "import torch, pytest, matplotlib, setuptools" >/dev/null 2>&1; then
  echo "python_package: $py lacks torch/pytest/matplotlib/setuptools (bash scripts/bootstrap.sh installs them into .venv)"
  [ -n "${CI:-}" ] && exit 1
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Build from a copy so the source tree gets no build/ or egg-info.
mkdir -p "$tmp/src" && cp -r "$src/pyproject.toml" "$src/setup.py" "$src/cudal2" "$tmp/src/"
CUDAL2_RUNTIME_LIB="$lib" "$py" -m pip wheel -q --no-deps --no-build-isolation -w "$tmp/wheel" "$tmp/src"
"$py" -m pip install -q --no-deps --no-compile --target "$tmp/site" "$tmp/wheel"/cudal2-*.whl
test -f "$tmp/site/cudal2/lib/libcudal2_runtime.so" || { echo "python_package: the wheel lacks the runtime library"; exit 1; }
cd "$tmp"
# CUDAL2_TEST_INSTALLED: import the installed package, not python/ from the source tree.
env -u CUDAL2_RUNTIME_LIB CUDAL2_TEST_INSTALLED=1 PYTHONPATH="$tmp/site" CUDAL2_CLI="$cli" \
  "$py" -m pytest -q -rs -p no:cacheprovider "$here"
