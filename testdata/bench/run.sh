#!/usr/bin/env bash
# testdata/bench/run.sh — kseg's performance targets (issue 6), each measured as a
# ratio against a baseline run on the same file in the same run, so that
# the machine's speed cancels out. See docs/performance.md.
#
#   testdata/bench/run.sh [-n RUNS] [-d DATADIR] [-s SIZE] [-q]
#
#   -n RUNS     runs per command; the median counts (default 5)
#   -d DATADIR  keep the generated data here and reuse it on the next run
#               (default: a temporary directory, removed at the end)
#   -s SIZE     size of the main segment (default 1GiB)
#   -q          quick: -n 3, no 4 GiB segment, a smaller scaling segment
#
# It builds kseg and the baselines (testdata/bench/crcfloor,
# testdata/bench/kmsgpeer), writes the test data with testdata/bench/gen,
# times every pair with testdata/bench/measure (runs interleaved A B A B …,
# stdout to /dev/null; a run during which other processes took more than a
# quarter of a core is repeated) and prints a
# table of target, measured, baseline, ratio, goal and PASS/FAIL. It exits
# 1 when a target fails. Measure on an idle machine: `uptime` first.
set -euo pipefail
cd "$(dirname "$0")/../.."

RUNS=5 DATA="" SIZE=1GiB QUICK=0
while getopts "n:d:s:q" opt; do
  case $opt in
    n) RUNS=$OPTARG ;;
    d) DATA=$OPTARG ;;
    s) SIZE=$OPTARG ;;
    q) QUICK=1; RUNS=3 ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
  esac
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kseg-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
if [ -z "$DATA" ]; then DATA=$WORK/data; fi
mkdir -p "$DATA"
BIN=$WORK/bin
mkdir -p "$BIN"

echo "== machine"
echo "cpu:    $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
echo "go:     $(go version)"
echo "load:   $(uptime | sed 's/.*load average: //')"
echo "runs:   $RUNS per command, median"

echo "== build"
go build -o "$BIN/kseg" .
for p in crcfloor kmsgpeer gen measure; do go build -o "$BIN/$p" "./testdata/bench/$p"; done

gen() { # gen NAME SIZE [flags]: a partition directory DATA/NAME/bench-0
  local dir=$DATA/$1
  if [ ! -e "$dir/bench-0/00000000000000000000.log" ]; then
    rm -rf "$dir"
    "$BIN/gen" -size "$2" -out "$dir" "${@:3}"
  fi
}
echo "== data ($DATA)"
gen mixed "$SIZE"
MIXED=$DATA/mixed/bench-0
SEG=$MIXED/00000000000000000000.log
SCALE_SIZE=256MiB
[ $QUICK = 1 ] && SCALE_SIZE=64MiB
gen compressed "$SCALE_SIZE" -codecs zstd,lz4,gzip
COMP=$DATA/compressed/bench-0/00000000000000000000.log
if [ $QUICK = 0 ]; then
  gen big 4GiB
  BIG=$DATA/big/bench-0/00000000000000000000.log
fi
if [ ! -d "$DATA/logdir/bench-999" ]; then
  rm -rf "$DATA/logdir"
  "$BIN/gen" -partitions 1000 -size 64KiB -out "$DATA/logdir"
fi
LOGDIR=$DATA/logdir
# Warm the page cache: every target reads a cached file, as the baseline does.
cat "$SEG" "$COMP" > /dev/null
find "$LOGDIR" -type f -exec cat {} + > /dev/null

ROWS=()
FAILED=0
row() { # row TARGET MEASURED BASELINE RATIO GOAL OK
  ROWS+=("$1|$2|$3|$4|$5|$6")
  [ "$6" = PASS ] || [ "$6" = SKIP ] || FAILED=1
}
# pair NAME GOAL(<=x|>=x) -- CMD... :: BASELINE...: the ratio CMD/BASELINE
pair() {
  local name=$1 goal=$2; shift 3
  local out
  out=$("$BIN/measure" -n "$RUNS" -- "$@")
  local a b
  a=$(sed -n 1p <<<"$out"); b=$(sed -n 2p <<<"$out")
  local ta tb ratio ok
  ta=$(cut -d' ' -f1 <<<"$a"); tb=$(cut -d' ' -f1 <<<"$b")
  ratio=$(awk -v a="$ta" -v b="$tb" 'BEGIN{printf "%.2f", a/b}')
  ok=$(awk -v r="$ratio" -v g="${goal:2}" -v op="${goal:0:2}" 'BEGIN{print ((op=="<=" && r<=g) || (op==">=" && r>=g)) ? "PASS" : "FAIL"}')
  row "$name" "$(spread "$a")" "$(spread "$b")" "$ratio" "$goal" "$ok"
}
# spread: "median (min-max)", and how many runs other processes disturbed
# and testdata/bench/measure repeated.
spread() { awk '{printf "%.3fs (%.3f-%.3f)", $1, $2, $3; if ($5 > 0) printf " %d redone", $5}' <<<"$1"; }

echo "== targets"
pair "dump -o json (batches, CRCs) / crcfloor" "<=1.5" -- \
  "$BIN/kseg" dump -o json "$SEG" :: "$BIN/crcfloor" "$SEG"
pair "dump --deep --print-data -o json / kmsgpeer" "<=0.5" -- \
  "$BIN/kseg" dump --deep --print-data -o json "$SEG" :: "$BIN/kmsgpeer" "$SEG"
if "$BIN/kseg" replay-psm --help > /dev/null 2>&1; then
  pair "replay-psm --from-snapshot none / crcfloor" "<=2" -- \
    "$BIN/kseg" replay-psm --from-snapshot none "$MIXED" :: "$BIN/crcfloor" "$SEG"
else
  row "replay-psm --from-snapshot none / crcfloor" "-" "-" "-" "<=2" SKIP
  echo "note: replay-psm is not registered yet; skipped"
fi

# Scaling: GOMAXPROCS=1 over GOMAXPROCS=2 on zstd/lz4/gzip batches, with
# identical output.
pair "deep dump zstd/lz4/gzip: GOMAXPROCS=1 / GOMAXPROCS=2" ">=1.6" -- \
  GOMAXPROCS=1 "$BIN/kseg" dump --deep --print-data -o json "$COMP" :: \
  GOMAXPROCS=2 "$BIN/kseg" dump --deep --print-data -o json "$COMP"
sum1=$(GOMAXPROCS=1 "$BIN/kseg" dump --deep --print-data -o json "$COMP" | sha256sum | cut -c1-16)
sum2=$(GOMAXPROCS=2 "$BIN/kseg" dump --deep --print-data -o json "$COMP" | sha256sum | cut -c1-16)
if [ "$sum1" = "$sum2" ]; then ok=PASS; else ok=FAIL; fi
row "  same output at GOMAXPROCS=1 and 2 (sha256)" "$sum2" "$sum1" "-" "equal" "$ok"

# Log directory of 1,000 small partitions against reading its files once.
pair "dump LOGDIR (1000 partitions) / cat" "<=2" -- \
  "$BIN/kseg" dump -o json "$LOGDIR" :: sh -c "find '$LOGDIR' -type f -exec cat {} +"
if "$BIN/kseg" replay-psm --output json "$LOGDIR" > /dev/null 2>&1; then
  pair "replay-psm LOGDIR (1000 partitions) / cat" "<=2" -- \
    "$BIN/kseg" replay-psm --output json "$LOGDIR" :: sh -c "find '$LOGDIR' -type f -exec cat {} +"
else
  row "replay-psm LOGDIR (1000 partitions) / cat" "-" "-" "-" "<=2" SKIP
  echo "note: replay-psm does not take a log directory yet; skipped"
fi

# Peak resident memory, flat in the segment size.
rss() { # rss NAME FILE: the peak RSS of the heaviest and the lightest dump
  local deep shallow
  deep=$("$BIN/measure" -n 1 -- "$BIN/kseg" dump --deep --print-data -o json "$2" | cut -d' ' -f4)
  shallow=$("$BIN/measure" -n 1 -- "$BIN/kseg" dump -o json "$2" | cut -d' ' -f4)
  local peak=$(( deep > shallow ? deep : shallow ))
  row "peak RSS, $1 (deep --print-data / batches)" "$((deep / 1024)) / $((shallow / 1024)) MiB" "-" "-" "<=128 MiB" \
    "$([ "$peak" -le $((128 * 1024)) ] && echo PASS || echo FAIL)"
}
rss "$SIZE segment" "$SEG"
if [ $QUICK = 0 ]; then rss "4 GiB segment" "$BIG"; fi

echo
printf '%-58s | %-36s | %-36s | %-6s | %-9s | %s\n' target measured baseline ratio goal result
printf '%s\n' "$(printf -- '-%.0s' {1..166})"
for r in "${ROWS[@]}"; do
  IFS='|' read -r t m b ra g ok <<<"$r"
  printf '%-58s | %-36s | %-36s | %-6s | %-9s | %s\n' "$t" "$m" "$b" "$ra" "$g" "$ok"
done
exit $FAILED
