#!/usr/bin/env bash
# Fails when a C++/CUDA source of the repository is not formatted as .clang-format says (run by .ci/run).
# Fix with:   bash scripts/check_format.sh --fix
set -euo pipefail
cd "$(dirname "$0")/.."
# Tracked files and new ones not yet added (git-ignored paths, e.g. build trees, excluded).
mapfile -t listed < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh' |
                      sort -u)
files=()
for f in "${listed[@]}"; do [ -f "$f" ] && files+=("$f"); done  # not files deleted in the work tree
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run --Werror "${files[@]}"; then
  echo "check_format: the files above drift from .clang-format; run: bash scripts/check_format.sh --fix" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
