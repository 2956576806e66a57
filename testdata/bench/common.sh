# common.sh: what run.sh and scale.sh both need to read their options,
# prepare their data, measure and report. Sourced, not run, before their
# option loop; it only defines functions.

# bench_opt OPT: the options both scripts take (-n RUNS, -d DATA,
# -r RETRIES, -t ONLY, -k KSEG) into their variables; false for another.
bench_opt() {
  case $1 in
    n) RUNS=$OPTARG ;;
    d) DATA=$OPTARG ;;
    r) RETRIES=$OPTARG ;;
    t) ONLY=$OPTARG ;;
    k) KSEG=$(cd "$(dirname "$OPTARG")" && pwd)/$(basename "$OPTARG") ;;
    *) return 1 ;;
  esac
}

# want TARGET: -t named TARGET, or no -t was given (all).
want() { [ "$ONLY" = all ] || [[ ",$ONLY," == *",$1,"* ]]; }

# workdirs NAME: WORK, a temporary directory removed on exit; DATA made
# absolute (WORK/data without -d); BIN, where the programs are built.
workdirs() {
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/kseg-$1.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  if [ -z "$DATA" ]; then DATA=$WORK/data; fi
  mkdir -p "$DATA"
  DATA=$(cd "$DATA" && pwd)
  BIN=$WORK/bin
  mkdir -p "$BIN"
}

# machine: what the figures were measured on, and how.
machine() {
  echo "== machine"
  echo "cpu:    $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
  echo "memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo 2>/dev/null)"
  echo "disk:   $(df -h "$DATA" | awk 'NR==2 {print $1, $2}')"
  echo "go:     $(go version)"
  echo "kernel: $(uname -sr)"
  echo "load:   $(uptime | sed 's/.*load average: //')"
  echo "runs:   $RUNS per command, median; disturbed runs redone up to $RETRIES times"
}

# build PROGRAM...: kseg and the named programs of testdata/bench into
# BIN; K is the kseg to time (-k's, or the one built).
build() {
  go build -o "$BIN/kseg" .
  local p
  for p in "$@"; do go build -o "$BIN/$p" "./testdata/bench/$p"; done
  K=$BIN/kseg
  if [ -n "$KSEG" ]; then K=$KSEG; echo "kseg:   $K (-k)"; fi
}

# stamp DIR WHAT: DIR was made for WHAT (a size and flags), noted next to
# it (not in it: kseg would dump the note); fresh regenerates data that -d
# kept from a run that asked for something else.
fresh() { [ -e "$1.made-for" ] && [ "$(cat "$1.made-for")" = "$2" ]; }
stamp() { echo "$2" > "$1.made-for"; }

# warm DIR...: the page cache holds every file below DIR: every target
# reads cached files, as its floor does.
warm() { find "$@" -type f -exec cat {} + > /dev/null; }

ROWS=()
FAILED=0
row() { # row TARGET MEASURED FLOOR RATIO CPU-RATIO GOAL RESULT
  ROWS+=("$1|$2|$3|$4|$5|$6|$7")
  [ "$7" = PASS ] || [ "$7" = SKIP ] || [ "$7" = "-" ] || FAILED=1
}
judge() { # judge RATIO GOAL(<=x|>=x)
  awk -v r="$1" -v g="${2:2}" -v op="${2:0:2}" 'BEGIN{print ((op=="<=" && r<=g) || (op==">=" && r>=g)) ? "PASS" : "FAIL"}'
}
# table FORMAT: the rows under a header, FORMAT a printf format of the
# seven columns (their widths).
table() {
  echo
  printf "$1" target measured floor ratio cpu goal result
  printf '%s\n' "$(printf -- '-%.0s' {1..170})"
  local r t m b ra c g ok
  for r in "${ROWS[@]}"; do
    IFS='|' read -r t m b ra c g ok <<<"$r"
    printf "$1" "$t" "$m" "$b" "$ra" "$c" "$g" "$ok"
  done
}
