#!/usr/bin/env bash
# testdata/bench/fuzz.sh: run every kseg fuzz target for a chosen time.
#
# Usage:
#   testdata/bench/fuzz.sh [DURATION] [TARGETS]
#
#   DURATION  time per target, as go test -fuzztime takes it: 2m, 30s, 1h,
#             or an execution count such as 500000x. Default 2m.
#   TARGETS   an extended regular expression; only targets whose name
#             matches run (e.g. 'Scanner|Records'). Default: all.
#
# Environment:
#   FUZZ_JOBS      targets fuzzed at the same time (default 2)
#   FUZZ_PARALLEL  fuzzing workers per target, go test -parallel (default 1)
#   FUZZ_MINIMIZE  go test -fuzzminimizetime (default 10s; Go's 60s default
#                  stalls a run for a minute on every large new input)
#   FUZZ_PKGS      packages with fuzz targets (default: every package of
#                  the module with a Fuzz* function; --packages lists them)
#   FUZZ_LOGS      directory for one log per target (default: a new
#                  directory under ${TMPDIR:-/tmp})
#
# Every Fuzz* function of FUZZ_PKGS runs (go test -list finds them), so a
# new target needs no change here. A failing input is written by go test to
# <package>/testdata/fuzz/<Target>/<hash>: from then on it runs as a seed
# with every plain `go test`. Fix the bug, keep the file, and commit both
# (docs/fuzzing.md).
#
# Go 1.26 may fail a duration-based run at its very end with "context
# deadline exceeded" and no failing input (golang/go#75804, fixed in Go
# 1.27). Such a run is reported as "ok (go#75804)" when it wrote no input.
#
# Exit status: 0 when no target found a failure, 1 otherwise, 2 on usage.
set -euo pipefail
cd "$(dirname "$0")/../.."

# fuzz_packages: every package (./dir) whose test files declare a Fuzz*
# function, so that a new package's targets (psm's FuzzReplay was missed
# by a fixed list) run without a change here.
fuzz_packages() {
  grep -rlE --include='*_test.go' '^func Fuzz[A-Z0-9]' . | grep -v '^\./\.' |
    xargs -n1 dirname | sort -u | tr '\n' ' '
}

case ${1:-} in
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  --packages) fuzz_packages; echo; exit 0 ;;
esac
duration=${1:-2m}
filter=${2:-.}
jobs=${FUZZ_JOBS:-2}
parallel=${FUZZ_PARALLEL:-1}
minimize=${FUZZ_MINIMIZE:-10s}
read -r -a pkgs <<<"${FUZZ_PKGS:-$(fuzz_packages)}"
case $duration in
  *[0-9]x|*[0-9][smh]|*[0-9]ms) ;;
  *) echo "fuzz.sh: DURATION must look like 2m, 30s, 1h or 100000x, not '$duration'" >&2; exit 2 ;;
esac
logs=${FUZZ_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/kseg-fuzz.XXXXXX")}
mkdir -p "$logs"

# "pkg Target" pairs, from go test -list (which prints the names of a
# package, then "ok <import path>").
targets=()
for pkg in "${pkgs[@]}"; do
  while read -r name; do
    targets+=("$pkg $name")
  done < <(go test -list '^Fuzz' "$pkg" | grep -E '^Fuzz' | grep -E -- "$filter" || true)
done
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz.sh: no fuzz target matches '$filter'" >&2
  exit 2
fi
echo "fuzzing ${#targets[@]} targets for $duration each, $jobs at a time (-parallel $parallel); logs in $logs"

corpus() { ls "$1/testdata/fuzz/$2" 2>/dev/null | sort || true; }

# run PKG TARGET: fuzz one target, write its verdict to $logs/TARGET.result.
run() {
  local pkg=$1 name=$2 log="$logs/$2.log" before after new verdict
  before=$(corpus "$pkg" "$name")
  if go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$duration" \
       -parallel "$parallel" -fuzzminimizetime "$minimize" >"$log" 2>&1; then
    verdict=ok
  else
    verdict=FAIL
  fi
  after=$(corpus "$pkg" "$name")
  new=$(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')
  if [ "$verdict" = FAIL ] && [ -z "${new// /}" ] && grep -q 'context deadline exceeded' "$log"; then
    verdict="ok (go#75804)"
  fi
  local execs
  execs=$(grep -Eo 'execs: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
  printf '%-24s %-16s %12s execs  %s\n' "$name" "$verdict" "$execs" "${new:+new input: $pkg/testdata/fuzz/$name/$new}" \
    >"$logs/$name.result"
  cat "$logs/$name.result"
}

running=0
for t in "${targets[@]}"; do
  # shellcheck disable=SC2086
  run $t &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

echo
echo "summary ($duration per target):"
status=0
for t in "${targets[@]}"; do
  name=${t#* }
  cat "$logs/$name.result"
  grep -q ' FAIL ' "$logs/$name.result" && status=1
done
if [ "$status" -ne 0 ]; then
  echo "failures: see the logs in $logs and the new inputs under testdata/fuzz/"
fi
exit "$status"
