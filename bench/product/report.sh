#!/usr/bin/env bash
# docs/report/ from the committed H100 and H200 results (CPU only: matplotlib):
#   bash bench/product/report.sh [ALL_METHODS_RUN]
# Sections: the runtime (tables/h100-f32.json) against cuBLASLt auto-tuning and heuristic on the
# 1000-shape grid, offline and server (bench/results/h100/runtime-lat/runtime-grid{,-server}: the
# shipped table, one process per mode); cuBLASLt auto-tuning against cuBLAS on the grid; every
# baseline on the sample grid; then the H200: the runtime with the H200 table against auto-tuning
# on the grid, offline and server (bench/results/h200/floor/, section 9), and against every
# baseline on the sample grid (the README's main command; torch.matmul did not run there: the
# carried build had no PyTorch plugin). ALL_METHODS_RUN (a CSV, glob or comma list: a whole-grid
# run with bench's default methods, i.e. the runtime beside cuBLAS, cuBLASLt and torch.matmul in
# one process; the command is in bench/results/README.md) becomes the first section when given.
set -euo pipefail
cd "$(dirname "$0")/../.."
R=bench/results/h100 F=bench/results/h200/floor
PY=${CUDAL2_PYTHON:-.venv/bin/python}
args=()
if [ $# -ge 1 ]; then
  args+=(--csv "$1" --section-subject runtime --section-title
         "The paper's 1000-shape grid: libcudal2_runtime vs every baseline (cuBLAS, cuBLASLt heuristic and auto-tuning, torch.matmul), offline and server, one process")
fi
args+=(--csv "$R/runtime-lat/runtime-grid.csv.xz,$R/runtime-lat/runtime-grid-server.csv.xz"
       --section-subject runtime --section-title
       "H100: the paper's 1000-shape grid, libcudal2_runtime (tables/h100-f32.json, best of NN/TN) vs cuBLASLt auto-tuning and heuristic, offline and server (one process per mode)"
       --csv "$R/grid*.csv.xz" --section-subject cublaslt-autotune --section-title
       "H100: the paper's 1000-shape grid, cuBLASLt auto-tuning (best of NN/TN) vs cuBLAS, offline"
       --csv "$R/sample.csv" --section-subject cublaslt-autotune --section-title
       "H100: the 16-shape sample grid, cuBLASLt auto-tuning vs every baseline, offline and server"
       --csv "$F/shuffled/grid-s23.csv.xz,$F/shuffled/server-s23.csv.xz" --section-subject runtime --section-title
       "H200: the paper's 1000-shape grid, libcudal2_runtime (tables/h200-f32.json before store24, best of NN/TN) vs cuBLASLt auto-tuning, offline and server, the methods set up in a shuffled order (bench/results/h200/floor/, section 9)"
       --csv "$F/shuffled/readme-sample-s24.csv.gz" --section-subject runtime --section-title
       "H200: the 16-shape sample grid (the README's main command), libcudal2_runtime vs every baseline, offline")
rm -f docs/report/*.png
"$PY" python/cudal2/report.py --out docs/report --title "cudal2 report: H100 and H200 (bench/results/)" "${args[@]}"
