# common.sh: what run.sh and scale.sh both need before they measure.
# Sourced, not run; both scripts set ONLY (-t) and DATA (-d) first.

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
