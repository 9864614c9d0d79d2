#!/usr/bin/env bash
# docs/report/ from the committed H100 results (CPU only: matplotlib):
#   bash bench/product/report_h100.sh [ALL_METHODS_RUN]
# Sections: the runtime (tables/h100-f32.json) against cuBLASLt auto-tuning and heuristic on the
# 1000-shape grid, offline and server (bench/results/h100/runtime-lat/runtime-grid{,-server}: the
# shipped table, one process per mode); cuBLASLt auto-tuning against cuBLAS on the grid; every
# baseline on the sample grid; last, the runtime with the H200 table on the grid, measured on an
# H200. ALL_METHODS_RUN (a CSV, glob or comma list: a whole-grid run with bench's default
# methods, i.e. the runtime beside cuBLAS, cuBLASLt and torch.matmul in one process; the command
# is in bench/results/README.md) becomes the first section when given.
set -euo pipefail
cd "$(dirname "$0")/../.."
R=bench/results/h100
PY=${CUDAL2_PYTHON:-.venv/bin/python}
args=()
if [ $# -ge 1 ]; then
  args+=(--csv "$1" --section-subject runtime --section-title
         "The paper's 1000-shape grid: libcudal2_runtime vs every baseline (cuBLAS, cuBLASLt heuristic and auto-tuning, torch.matmul), offline and server, one process")
fi
args+=(--csv "$R/runtime-lat/runtime-grid.csv.gz,$R/runtime-lat/runtime-grid-server.csv.gz"
       --section-subject runtime --section-title
       "The paper's 1000-shape grid: libcudal2_runtime (tables/h100-f32.json, best of NN/TN) vs cuBLASLt auto-tuning and heuristic, offline and server (one process per mode)"
       --csv "$R/grid*.csv.gz" --section-subject cublaslt-autotune --section-title
       "The paper's 1000-shape grid: cuBLASLt auto-tuning (best of NN/TN) vs cuBLAS, offline"
       --csv "$R/sample.csv" --section-subject cublaslt-autotune --section-title
       "The 16-shape sample grid: cuBLASLt auto-tuning vs every baseline, offline and server"
       --csv "bench/results/h200/runtime-grid/runtime-h200-grid.csv.gz" --section-subject runtime --section-title
       "H200: the paper's 1000-shape grid, libcudal2_runtime (tables/h200-f32.json before its 7-entry drop list) vs cuBLASLt auto-tuning and heuristic, offline (bench/results/h200/runtime-grid/)")
rm -f docs/report/*.png
"$PY" python/cudal2/report.py --out docs/report --title "cudal2 report: H100 (bench/results/h100)" "${args[@]}"
