#!/usr/bin/env bash
# Fails when clang-tidy (.clang-tidy) finds anything in the host C++ sources: every src/**/*.cpp in
# the build's compile_commands.json and the src/ headers they include (run by .ci/run after the build).
#   bash scripts/check_tidy.sh [--all | --full] [--update] [BUILD_DIR] [SOURCE.cpp...]
#     BUILD_DIR  default build (CMake writes compile_commands.json at configure time)
#     SOURCE.cpp check only these sources (default: all of them)
#     --all      clang-tidy on every source, the committed fingerprints ignored
#     --full     .clang-tidy as it stands (no CI cut, below) on every source; no fingerprints
#     --update   after a clean run, rewrite .ci/tidy-fingerprints (commit it with the change)
# Regenerate the fingerprints from scratch (every source through clang-tidy, ~20 min on 2 cores):
#   bash scripts/check_tidy.sh --all --update
# By default the two costly parts .clang-tidy names are cut for CI's time: the check
# performance-unnecessary-value-param and the static analyzer's depth (20000 nodes per function);
# --full runs .clang-tidy as it stands. Jobs: $CHECK_TIDY_JOBS, default nproc.
#
# Fingerprints: .ci/tidy-fingerprints lists sources found clean, each with the SHA-256 of
# everything clang-tidy's verdict on it depends on (scripts/tidy_fingerprint.py: its preprocessed
# input with comments and macro definitions, the raw text of every header it includes, its
# compile flags, .clang-tidy, this script's clang-tidy arguments and the clang-tidy version; the
# checkout's path replaced by a placeholder). By default clang-tidy runs only on the sources whose
# fingerprint is not listed: any change to a source, to a header it includes (src/ or system), to
# its flags or to the configuration re-checks it, so a finding anywhere still fails. A source is
# listed only by --update after a run in which it was either checked clean or already listed with
# the same fingerprint.
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/.."
full=0
all=0
update=0
build=build
only=()
for a in "$@"; do
  case "$a" in
    --full) full=1 ;;
    --all) all=1 ;;
    --update) update=1 ;;
    -h | --help) sed -n '2,24p' "$0"; exit 0 ;;
    -*) echo "check_tidy: unknown option $a (--help)" >&2; exit 2 ;;
    *.cpp) only+=("$(cd "$here" && realpath -m "$a")") ;;  # relative to where it was called from
    *) build="$a" ;;
  esac
done
if [ $full -eq 1 ] && [ $update -eq 1 ]; then
  echo "check_tidy: --update records the CI run's fingerprints: use it without --full" >&2
  exit 2
fi
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
# Each source's path relative to the checkout (as tidy_fingerprint.py and .ci/tidy-fingerprints
# name it); SOURCE.cpp arguments keep only the sources named.
declare -A rel_of=()
if [ ${#files[@]} -gt 0 ]; then
  mapfile -t rels < <(realpath --relative-to="$(pwd -P)" "${files[@]}")
  declare -A named=()
  for o in "${only[@]}"; do named[$(realpath --relative-to="$(pwd -P)" "$o")]=1; done
  kept=()
  for i in "${!files[@]}"; do
    if [ ${#only[@]} -eq 0 ] || [ -n "${named[${rels[$i]}]:-}" ]; then
      kept+=("${files[$i]}")
      rel_of[${files[$i]}]=${rels[$i]}
    fi
  done
  files=("${kept[@]}")
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "check_tidy: no src/ sources in $db${only:+ among the ones named}" >&2
  exit 1
fi
args=(--quiet)
if [ $full -eq 0 ]; then
  args+=(--checks=-performance-unnecessary-value-param
         --extra-arg=-Xclang --extra-arg=-analyzer-config --extra-arg=-Xclang --extra-arg=max-nodes=20000)
fi
jobs=${CHECK_TIDY_JOBS:-$(nproc)}
version=$(clang-tidy --version | grep -o 'version [0-9.]*')
fpfile=.ci/tidy-fingerprints
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
start=$(date +%s)

# Which sources clang-tidy must see: all of them (--full, --all, or no fingerprint file), else the
# ones whose fingerprint is not in the committed list.
todo=("${files[@]}")
if [ $full -eq 0 ]; then
  salt="$(clang-tidy --version)"$'\n'"${args[*]}"
  python3 scripts/tidy_fingerprint.py --build "$build" --salt "$salt" --jobs "$jobs" "${files[@]}" \
    >"$logs/fingerprints.now" || echo "check_tidy: the sources above have no fingerprint: clang-tidy checks them" >&2
  grep -v '^#' "$fpfile" 2>/dev/null | sort -u >"$logs/fingerprints.listed" || true
  if [ $all -eq 0 ]; then
    declare -A clean=()
    while read -r _ rel; do clean[$rel]=1; done < <(comm -12 <(sort "$logs/fingerprints.now") "$logs/fingerprints.listed")
    todo=()
    for f in "${files[@]}"; do [ -n "${clean[${rel_of[$f]}]:-}" ] || todo+=("$f"); done
  fi
fi
fpsecs=$(($(date +%s) - start))
skipped=$((${#files[@]} - ${#todo[@]}))

# One log per source, so parallel runs do not interleave; a failing run leaves a .failed marker.
export logs
if [ ${#todo[@]} -gt 0 ]; then
  printf '%s\n' "${todo[@]}" |
    xargs -P "$jobs" -I{} bash -c \
      'log="$logs/$(echo "$1" | tr / _)"; clang-tidy "${@:2}" "$1" >"$log" 2>&1 || touch "$log.failed"' \
      _ {} -p "$build" "${args[@]}"
fi
secs=$(($(date +%s) - start))
failed=$(find "$logs" -name '*.failed' | wc -l)
# Warnings in a header repeat once per source that includes it: count each once.
diags=$(cat "$logs"/_* 2>/dev/null | grep -E '^/.*:[0-9]+:[0-9]+: (warning|error): ' | sort -u || true)
ndiag=$(printf '%s' "$diags" | grep -c . || true)
mode=$([ $full -eq 1 ] && echo full || echo ci)
how="${#todo[@]} checked"
[ $full -eq 0 ] && how+=", $skipped unchanged since $fpfile (fingerprints ${fpsecs}s)"
if [ "$failed" -gt 0 ]; then
  for f in "$logs"/*.failed; do grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' "${f%.failed}"; done
  checks=$(printf '%s\n' "$diags" | grep -o '\[[^]]*\]$' | tr -d '[]' | sed 's/,-warnings-as-errors//' | sort |
           uniq -c | awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1}')
  echo "check_tidy: FAILED ($mode): $ndiag finding(s) in $failed of ${#todo[@]} sources checked ($how), ${secs}s: $checks" >&2
  exit 1
fi
if [ $update -eq 1 ]; then
  # Listed from now on: the sources checked clean in this run and those already listed with the
  # fingerprint they have now; a source that was neither (e.g. left out by SOURCE.cpp) is not.
  declare -A checked=()
  for f in "${todo[@]}"; do checked[${rel_of[$f]}]=1; done
  while read -r digest rel; do
    if [ -n "${checked[$rel]:-}" ] || grep -qxF "$digest $rel" "$logs/fingerprints.listed"; then
      echo "$digest $rel"
    fi
  done <"$logs/fingerprints.now" >"$logs/entries"
  # Entries of sources this run did not look at (SOURCE.cpp named others) stay as they were.
  if [ ${#only[@]} -gt 0 ]; then
    cut -d' ' -f2 "$logs/fingerprints.now" | sort >"$logs/seen"
    sort -k2 "$logs/fingerprints.listed" | join -1 2 -2 1 -v 1 -o 1.1,1.2 - "$logs/seen" >>"$logs/entries"
  fi
  {
    echo "# Host sources clang-tidy found clean (CI's cut, $version): SHA-256 of each one's input, path."
    echo "# Written by: bash scripts/check_tidy.sh --update   (--all --update: every source checked anew)"
    sort -k2 "$logs/entries"
  } >"$logs/fingerprints.new"
  mkdir -p "$(dirname "$fpfile")"
  cp "$logs/fingerprints.new" "$fpfile"
  echo "check_tidy: wrote $fpfile ($(grep -vc '^#' "$fpfile") sources)"
fi
echo "check_tidy: ${#files[@]} sources clean ($mode, $version, $how, ${secs}s)"
