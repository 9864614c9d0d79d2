#!/usr/bin/env bash
# Fails when clang-tidy (.clang-tidy) finds anything in the host C++ sources: every src/**/*.cpp in
# the build's compile_commands.json and the src/ headers they include (run by .ci/run after the build).
#   bash scripts/check_tidy.sh [--full] [BUILD_DIR]     BUILD_DIR: default build (CMake writes
#                                                       compile_commands.json at configure time)
# By default the two costly parts .clang-tidy names are cut for CI's time: the check
# performance-unnecessary-value-param and the static analyzer's depth (20000 nodes per function);
# --full runs .clang-tidy as it stands. Jobs: $CHECK_TIDY_JOBS, default nproc.
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
build=build
for a in "$@"; do
  case "$a" in
    --full) full=1 ;;
    -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
    *) build="$a" ;;
  esac
done
if ! command -v clang-tidy >/dev/null 2>&1; then
  echo "check_tidy: clang-tidy not found (bash scripts/bootstrap.sh installs it)" >&2
  exit 1
fi
db="$build/compile_commands.json"
if [ ! -f "$db" ]; then
  echo "check_tidy: $db not found: configure or build first (bash scripts/build.sh)" >&2
  exit 1
fi
# The host sources the build compiles (a file may appear once per target that builds it).
# Paths in it are absolute: the logical or the physical path of the checkout.
mapfile -t files < <(grep -o '"file": *"[^"]*"' "$db" | sed 's/^"file": *"//; s/"$//' |
                     grep -E "^($PWD|$(pwd -P))/src/.*\.cpp$" | sort -u)
if [ ${#files[@]} -eq 0 ]; then
  echo "check_tidy: no src/ sources in $db" >&2
  exit 1
fi
args=(-p "$build" --quiet)
if [ $full -eq 0 ]; then
  args+=(--checks=-performance-unnecessary-value-param
         --extra-arg=-Xclang --extra-arg=-analyzer-config --extra-arg=-Xclang --extra-arg=max-nodes=20000)
fi
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
start=$(date +%s)
# One log per source, so parallel runs do not interleave; a failing run leaves a .failed marker.
export logs
printf '%s\n' "${files[@]}" |
  xargs -P "${CHECK_TIDY_JOBS:-$(nproc)}" -I{} bash -c \
    'log="$logs/$(echo "$1" | tr / _)"; clang-tidy "${@:2}" "$1" >"$log" 2>&1 || touch "$log.failed"' \
    _ {} "${args[@]}"
secs=$(($(date +%s) - start))
failed=$(find "$logs" -name '*.failed' | wc -l)
# Warnings in a header repeat once per source that includes it: count each once.
diags=$(cat "$logs"/* | grep -E '^/.*:[0-9]+:[0-9]+: (warning|error): ' | sort -u || true)
ndiag=$(printf '%s' "$diags" | grep -c . || true)
mode=$([ $full -eq 1 ] && echo full || echo ci)
if [ "$failed" -gt 0 ]; then
  for f in "$logs"/*.failed; do grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' "${f%.failed}"; done
  checks=$(printf '%s\n' "$diags" | grep -o '\[[^]]*\]$' | tr -d '[]' | sed 's/,-warnings-as-errors//' | sort |
           uniq -c | awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1}')
  echo "check_tidy: FAILED ($mode): $ndiag finding(s) in $failed of ${#files[@]} sources, ${secs}s: $checks" >&2
  exit 1
fi
echo "check_tidy: ${#files[@]} sources clean ($mode, $(clang-tidy --version | grep -o 'version [0-9.]*'), ${secs}s)"
