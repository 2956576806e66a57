#!/usr/bin/env bash
# testdata/bench/run.sh — kseg's performance targets (issues 6 and 16), each
# measured as a ratio against a floor run on the same data in the same run,
# so that the machine's speed cancels out. See docs/performance.md.
#
#   testdata/bench/run.sh [-n RUNS] [-d DATADIR] [-s SIZE] [-q] [-r RETRIES] [-t ONLY]
#
#   -n RUNS     runs per command; the median counts (default 5)
#   -d DATADIR  keep the generated data here and reuse it on the next run
#               (default: a temporary directory, removed at the end)
#   -s SIZE     size of the main segment (default 1GiB)
#   -q          quick: -n 3, no 4 GiB segment, a smaller scaling segment
#   -r RETRIES  disturbed runs measure repeats per command (default 10;
#               0 on a busy development machine, where every run is)
#   -t ONLY   only these groups of targets, comma-separated: dump, index,
#               deep, scaling, replay, mirror, mirrorsegs, chain, digest, mm2,
#               logdir, mixed, check, progress, rss (default: all)
#   -k KSEG     time this kseg binary instead of one built from the tree (to
#               compare builds: the floors are built from the tree either way)
#
# It builds kseg and the floors (testdata/bench/crcfloor, kmsgpeer,
# decodefloor, ptyrun), writes the test data with testdata/bench/gen (and kseg mirror),
# times every group with testdata/bench/measure (runs interleaved A B A B …,
# stdout to /dev/null; a run during which other processes took more than a
# quarter of a core is repeated; per-run preparation such as a fresh
# destination directory is done by measure's @setup, outside the timing)
# and prints a table of target, measured, floor, ratio (wall and CPU),
# goal and PASS/FAIL, then the peak memory of every command on every size.
# It exits 1 when a target fails. Measure on an idle machine: `uptime` first.
set -euo pipefail
cd "$(dirname "$0")/../.."

. testdata/bench/common.sh
RUNS=5 DATA="" SIZE=1GiB QUICK=0 RETRIES=10 ONLY=all KSEG=""
while getopts "n:d:s:qr:t:k:" opt; do
  case $opt in
    s) SIZE=$OPTARG ;;
    q) QUICK=1; RUNS=3 ;;
    *) bench_opt "$opt" || { sed -n '2,30p' "$0"; exit 2; } ;;
  esac
done
workdirs bench
# Scratch space for the write commands' destinations: on the data's file
# system, so that cp and mirror write to the same disk.
SCRATCH=$DATA/scratch
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
trap 'rm -rf "$WORK" "$SCRATCH"' EXIT

machine

echo "== build"
build crcfloor kmsgpeer decodefloor gen measure ptyrun digestgen

gen() { # gen NAME SIZE [flags]: a partition directory DATA/NAME/bench-0
  local dir=$DATA/$1
  if ! fresh "$dir" "$2 ${*:3}"; then
    rm -rf "$dir"
    "$BIN/gen" -size "$2" -out "$dir" "${@:3}"
    # A broker writes partition.metadata; mirror warns without one.
    printf 'version: 0\ntopic_id: EBESExQVFhcYGRobHB0eHw\n' > "$dir/bench-0/partition.metadata"
    stamp "$dir" "$2 ${*:3}"
  fi
}
mirrorof() { # mirrorof NAME SRC [--upto N]: DATA/NAME/bench-0, made by kseg mirror
  local dir=$DATA/$1
  if ! fresh "$dir" "$2 ${*:3} $(stat -c %Y "$2"/*.log | tr '\n' ' ')"; then
    rm -rf "$dir" "$WORK/mbk"
    mkdir -p "$dir"
    "$K" mirror -q --backup-dir "$WORK/mbk" "${@:3}" "$2" "$dir/bench-0" > /dev/null
    stamp "$dir" "$2 ${*:3} $(stat -c %Y "$2"/*.log | tr '\n' ' ')"
  fi
}
logdir() { # logdir NAME N SIZE: a log directory of N partitions
  local dir=$DATA/$1
  if ! fresh "$dir" "$2 $3"; then
    rm -rf "$dir"
    "$BIN/gen" -partitions "$2" -size "$3" -out "$dir"
    stamp "$dir" "$2 $3"
  fi
}

echo "== data ($DATA)"
# The main data, unless only the mirrorsegs group (its own data) is asked.
if [ "$ONLY" != mirrorsegs ]; then
gen mixed "$SIZE"
MIXED=$DATA/mixed/bench-0
SEG=$MIXED/00000000000000000000.log
SCALE_SIZE=256MiB
[ $QUICK = 1 ] && SCALE_SIZE=64MiB
gen compressed "$SCALE_SIZE" -codecs zstd,lz4,gzip
COMP=$DATA/compressed/bench-0/00000000000000000000.log
if [ $QUICK = 0 ]; then
  gen big 4GiB
  BIG=$DATA/big/bench-0
fi
# MIRROR: a full mirror of MIXED, as a broker keeps it (.index, .timeindex,
# .txnindex, leader-epoch-checkpoint): verify-chain's B, --verify-index's
# partition. P99: a mirror of MIXED's first 99 % (by bytes), the start of
# every incremental mirror.
mirrorof mirror "$MIXED"
MIRROR=$DATA/mirror/bench-0
# cut_at SIZE: the baseOffset of the first batch at or after byte SIZE, from
# dump's JSON lines on stdin.
cut_at() { awk -v lim="$1" '/"type":"batch"/ { p = $0; sub(/.*"position":/, "", p); sub(/,.*/, "", p); if (p + 0 >= lim && o == "") { o = $0; sub(/.*"baseOffset":/, "", o); sub(/,.*/, "", o) } } END { print o }'; }
CUT=$("$K" dump -o json "$SEG" | cut_at $(( $(stat -c %s "$SEG") * 99 / 100 )))
mirrorof p99 "$MIXED" --upto "$CUT"
P99=$DATA/p99/bench-0
if [ $QUICK = 0 ]; then
  mirrorof bigmirror "$BIG"
  BIGMIRROR=$DATA/bigmirror/bench-0
fi
# MM2SRC: a 512 MiB partition of uncompressed batches (MM2's producer
# compresses nothing by default, and decompression is not what verify-mm2
# adds), and MM2REP a MirrorMaker 2 replica of it, written as
# MirrorSourceTask writes one (barrier/mm2/mm2test).
if want mm2 || want rss; then
  gen mm2src 512MiB -codecs none
  MM2SRC=$DATA/mm2src/bench-0
  if ! fresh "$DATA/mm2rep" "$(stat -c %Y "$MM2SRC"/*.log)"; then
    rm -rf "$DATA/mm2rep"
    "$BIN/gen" -mm2-replica "$MM2SRC" -out "$DATA/mm2rep"
    stamp "$DATA/mm2rep" "$(stat -c %Y "$MM2SRC"/*.log)"
  fi
  MM2REP=$DATA/mm2rep/A.bench-0
fi
logdir logdir 1000 64KiB
LOGDIR=$DATA/logdir
# MIXLOG: one SIZE partition (MIXED, hard-linked) among 999 small ones.
if ! fresh "$DATA/mixlog" "$SIZE 999"; then
  rm -rf "$DATA/mixlog"
  "$BIN/gen" -partitions 999 -size 64KiB -out "$DATA/mixlog"
  mkdir "$DATA/mixlog/backlog-0"
  ln "$MIXED"/* "$DATA/mixlog/backlog-0/"
  stamp "$DATA/mixlog" "$SIZE 999"
fi
MIXLOG=$DATA/mixlog
MIXBIG=$MIXLOG/backlog-0
CATSMALL="find '$MIXLOG' -path '$MIXBIG' -prune -o -type f -exec cat {} +"
warm "$MIXED" "$MIRROR" "$P99" "$DATA/compressed" "$LOGDIR" "$MIXLOG"
fi

# RSS[command|size] is the peak RSS (KiB) of every run measured so far.
declare -A RSS
# timed N LABEL... -- CMD :: CMD ...: run measure; OUT[i] is the line of the
# i-th command ("median min max rss redone cpu"). LABELs ("dump|1 GiB", or
# "-" for a floor) file each command's peak RSS under RSS.
timed() {
  local n=$1; shift
  local labels=()
  while [ "$1" != -- ]; do labels+=("$1"); shift; done
  shift
  mapfile -t OUT < <("$BIN/measure" -n "$n" -retries "$RETRIES" -- "$@")
  local i
  for i in "${!labels[@]}"; do
    [ "${labels[$i]}" = - ] && continue
    local r; r=$(cut -d' ' -f4 <<<"${OUT[$i]}")
    RSS[${labels[$i]}]=$(( ${RSS[${labels[$i]}]:-0} > r ? ${RSS[${labels[$i]}]:-0} : r ))
  done
}
# spread LINE: "median (min-max)", and how many runs measure redone.
spread() { awk '{printf "%.3fs (%.3f-%.3f)", $1, $2, $3; if ($5 > 0) printf " %d redone", $5}' <<<"$1"; }
# ratio A B [FIELD]: A/B of the medians (FIELD 1: wall, 6: CPU).
ratio() { awk -v a="$(cut -d' ' -f"${3:-1}" <<<"$1")" -v b="$(cut -d' ' -f"${3:-1}" <<<"$2")" 'BEGIN{printf "%.2f", (b > 0 ? a/b : 0)}'; }
# cmp_row TARGET GOAL A B: the ratio of line A over line B; GOAL "-" for
# a figure shown for information.
cmp_row() {
  local r ok=-; r=$(ratio "$3" "$4")
  [ "$2" = - ] || ok=$(judge "$r" "$2")
  row "$1" "$(spread "$3")" "$(spread "$4")" "$r" "$(ratio "$3" "$4" 6)" "$2" "$ok"
}
# pair TARGET GOAL LABEL -- CMD... :: FLOOR...: CMD against FLOOR.
pair() {
  local name=$1 goal=$2 label=$3; shift 4
  timed "$RUNS" "$label" - -- "$@"
  cmp_row "$name" "$goal" "${OUT[0]}" "${OUT[1]}"
}
# same_output TARGET "CMD A" "CMD B": equal sha256 of the two commands'
# stdout (each a string of words, split by the shell; NAME=VALUE words
# first set the environment).
same_output() {
  local sa sb
  sa=$(env $2 | sha256sum | cut -c1-16)
  sb=$(env $3 | sha256sum | cut -c1-16)
  row "$1" "$sa" "$sb" "-" "-" "equal" "$([ "$sa" = "$sb" ] && echo PASS || echo FAIL)"
}

echo "== targets"
if want dump; then
  # Issue 16: the batch-level dump (every CRC checked) uses both cores and
  # beats a single-core walk.
  pair "dump -o json (batches, CRCs) / crcfloor" "<=0.7" "dump|$SIZE" -- \
    "$K" dump -o json "$SEG" :: "$BIN/crcfloor" "$SEG"
  same_output "  same batch-level output at GOMAXPROCS=1 and 2 (sha256)" "GOMAXPROCS=2 $K dump -o json $SEG" "GOMAXPROCS=1 $K dump -o json $SEG"
fi
if want index; then
  # Both indexes checked against the log at little more than the dump's cost.
  pair "dump --verify-index / dump (partition with indexes)" "<=1.2" "dump --verify-index|$SIZE" -- \
    "$K" dump --verify-index -o json "$MIRROR" :: "$K" dump -o json "$MIRROR"
fi
if want deep; then
  # With the floor of any deep dump next to it: decodefloor decompresses
  # and walks every record on every core and renders nothing.
  timed "$RUNS" "dump --deep --print-data|$SIZE" - - -- \
    "$K" dump --deep --print-data -o json "$SEG" :: "$BIN/kmsgpeer" "$SEG" :: "$BIN/decodefloor" "$SEG"
  cmp_row "dump --deep --print-data -o json / kmsgpeer" "<=0.15" "${OUT[0]}" "${OUT[1]}"
  cmp_row "  decodefloor (decode only, every core) / kmsgpeer" "-" "${OUT[2]}" "${OUT[1]}"
  cmp_row "  dump --deep --print-data -o json / decodefloor" "-" "${OUT[0]}" "${OUT[2]}"
fi
if want scaling; then
  # Issue 6: a deep dump of compressed batches scales to the second core,
  # with identical output.
  pair "deep dump zstd/lz4/gzip: GOMAXPROCS=1 / GOMAXPROCS=2" ">=1.6" - -- \
    GOMAXPROCS=1 "$K" dump --deep --print-data -o json "$COMP" :: \
    GOMAXPROCS=2 "$K" dump --deep --print-data -o json "$COMP"
  same_output "  same deep output at GOMAXPROCS=1 and 2 (sha256)" "GOMAXPROCS=2 $K dump --deep --print-data -o json $COMP" \
    "GOMAXPROCS=1 $K dump --deep --print-data -o json $COMP"
fi
if want replay; then
  pair "replay-psm --from-snapshot none / crcfloor" "<=1.1" "replay-psm|$SIZE" -- \
    "$K" replay-psm --from-snapshot none "$MIXED" :: "$BIN/crcfloor" "$SEG"
fi
if want mirror; then
  # Every run writes a fresh destination, made by measure's @setup outside
  # the timing: an empty log directory for the full mirror and for cp; a
  # copy of P99 (fsynced, so that the mirror's fsync does not write it
  # again) for the incremental one. The floor copies exactly the files the
  # mirror writes (those of MIRROR) and fsyncs them and their directory, as
  # a mirror must.
  D=$SCRATCH/dst
  timed "$RUNS" "mirror|$SIZE" - "mirror (incremental)|$SIZE" -- \
    @setup "rm -rf '$D' '$D.bk' && mkdir '$D'" \
    "$K" mirror --backup-dir "$D.bk" "$MIXED" "$D/bench-0" :: \
    @setup "rm -rf '$D' && mkdir -p '$D/bench-0'" \
    sh -c "cp '$MIRROR'/* '$D/bench-0/' && sync '$D/bench-0'/* '$D/bench-0'" :: \
    @setup "rm -rf '$D' '$D.bk' && mkdir '$D' && cp -a '$P99' '$D/' && sync '$D/bench-0'/* '$D/bench-0'" \
    "$K" mirror --backup-dir "$D.bk" "$MIXED" "$D/bench-0"
  cmp_row "mirror into an empty DST / cp + sync of its files" "<=1.5" "${OUT[0]}" "${OUT[1]}"
  cmp_row "mirror of the last 1 % / full mirror" "<=0.1" "${OUT[2]}" "${OUT[0]}"
  rm -rf "$D" "$D.bk"
fi
if want mirrorsegs; then
  # Issue 29: a mirror into many destination segments, rolling where the
  # source did (10,000 segments of 16 KiB, 2,000 with -q), against copying
  # the files that mirror writes (a mirror made once, untimed) with cp -r
  # and an fsync of every file and of the directory, as a mirror must.
  NSEGS=10000
  [ $QUICK = 1 ] && NSEGS=2000
  gen segs "$((NSEGS * 12))KiB" -segment-bytes 16KiB -codecs zstd
  SEGSRC=$DATA/segs/bench-0
  mirrorof segsmirror "$SEGSRC" --segment-bytes 16384
  SEGMIRROR=$DATA/segsmirror/bench-0
  D=$SCRATCH/dsegs
  timed "$RUNS" - - -- \
    @setup "rm -rf '$D' '$D.bk' && mkdir '$D'" \
    "$K" mirror --segment-bytes 16384 --backup-dir "$D.bk" "$SEGSRC" "$D/bench-0" :: \
    @setup "rm -rf '$D' && mkdir '$D'" \
    sh -c "cp -r '$SEGMIRROR' '$D/' && find '$D/bench-0' -type f -exec sync {} + && sync '$D/bench-0'"
  cmp_row "mirror into 10,000 destination segments (-q: 2,000) / cp -r + fsync per file" "<=2" "${OUT[0]}" "${OUT[1]}"
  rm -rf "$D" "$D.bk"
fi
if want chain; then
  pair "verify-chain A B (B a full mirror) / crcfloor A B" "<=1.5" "verify-chain|$SIZE" -- \
    "$K" verify-chain "$MIXED" "$MIRROR" :: "$BIN/crcfloor" "$MIXED" "$MIRROR"
fi
if want mm2; then
  # Issue 23: a clean replica verified by content (both logs decoded and
  # hashed record by record, every CRC checked) against the CRC walk of
  # both logs.
  warm "$MM2SRC" "$MM2REP"
  pair "verify-mm2 SRC REPLICA (512 MiB, clean) / crcfloor SRC REPLICA" "<=1.5" "verify-mm2|512 MiB" -- \
    "$K" verify-mm2 "$MM2SRC" "$MM2REP" :: "$BIN/crcfloor" "$MM2SRC" "$MM2REP"
fi
if want digest; then
  # Issue 24: kseg digest reads every byte once (its CRC on a second core,
  # its hash on the first); its digest is a few dozen bytes per batch; and
  # verify-chain over digests of 100 GiB logs (written directly by
  # digestgen: no 100 GiB log is needed) takes seconds in flat memory.
  pair "digest MIXED / crcfloor" "<=1.1" "digest|$SIZE" -- \
    "$K" digest -q "$MIXED" :: "$BIN/crcfloor" "$SEG"
  "$K" digest -o "$SCRATCH/mixed.digest" "$MIXED" 2> "$SCRATCH/digest.txt"
  nb=$(sed -n 's/.*: \([0-9]*\) batch.*/\1/p' "$SCRATCH/digest.txt")
  db=$(stat -c %s "$SCRATCH/mixed.digest")
  per=$(awk -v d="$db" -v n="$nb" 'BEGIN{printf "%.1f", d/n}')
  row "  digest bytes per batch (MIXED, xxh3-128)" "$per ($db bytes, $nb batches)" "-" "-" "-" "<=60" \
    "$(awk -v p="$per" 'BEGIN{print (p <= 60) ? "PASS" : "FAIL"}')"
  DG=$DATA/digests100
  if ! fresh "$DG" "100GiB 16KiB"; then
    rm -rf "$DG"
    "$BIN/digestgen" -gib 100 -batch 16KiB -out "$DG" > "$DG.txt"
    stamp "$DG" "100GiB 16KiB"
  fi
  share=$(sed -n '1s/.*(\([0-9.]*\) %)/\1/p' "$DG.txt")
  row "  digest of 16 KiB batches / the log" "$share %" "-" "-" "-" "<=1 %" \
    "$(awk -v p="$share" 'BEGIN{print (p <= 1) ? "PASS" : "FAIL"}')"
  timed "$RUNS" "verify-chain (digests)|100 GiB digests" -- "$K" verify-chain "$DG/u.digest" "$DG/d.digest"
  secs=$(cut -d' ' -f1 <<<"${OUT[0]}")
  row "verify-chain over digests of two 100 GiB logs (seconds)" "$(spread "${OUT[0]}")" "-" "-" "-" "<=30 s" \
    "$(awk -v s="$secs" 'BEGIN{print (s <= 30) ? "PASS" : "FAIL"}')"
fi
if want logdir; then
  # Issue 6: a log directory of 1,000 small partitions against reading its
  # files once.
  pair "dump LOGDIR (1000 partitions) / cat" "<=2" "dump|1000 partitions" -- \
    "$K" dump -o json "$LOGDIR" :: sh -c "find '$LOGDIR' -type f -exec cat {} +"
  pair "replay-psm LOGDIR (1000 partitions) / cat" "<=2" "replay-psm|1000 partitions" -- \
    "$K" replay-psm -o json "$LOGDIR" :: sh -c "find '$LOGDIR' -type f -exec cat {} +"
fi
if want mixed; then
  # One SIZE partition among 999 small ones: the batch pipeline must serve
  # the big one as if it were alone.
  pair "dump LOGDIR (1 big + 999 small) / dump big + cat small" "<=1.2" "dump|1 big + 999 small" -- \
    "$K" dump -o json "$MIXLOG" :: sh -c "'$K' dump -o json '$MIXBIG'; $CATSMALL"
  pair "replay-psm LOGDIR (1 big + 999 small) / replay big + cat small" "<=1.2" "replay-psm|1 big + 999 small" -- \
    "$K" replay-psm -o json "$MIXLOG" :: sh -c "'$K' replay-psm -o json '$MIXBIG'; $CATSMALL"
fi
if want check; then
  # Issue 22: kseg check reads each partition once for every check, so
  # over ../shared/fixtures/real it costs about what dump --verify-index
  # alone costs (given every partition of the tree: dump does not walk
  # trees); and its cost per partition stays flat from 500 partitions to
  # 5,000 (two log directories made by gen -partitions).
  REAL=../shared/fixtures/real
  if [ -d "$REAL" ]; then
    warm "$REAL"
    # The partition directories: those holding a segment file, a snapshot,
    # leader-epoch-checkpoint or partition.metadata.
    mapfile -t REALPARTS < <(find "$REAL" -type f \( -name '*.log' -o -name '*.index' -o -name '*.timeindex' -o -name '*.snapshot' \
      -o -name leader-epoch-checkpoint -o -name partition.metadata \) -printf '%h\n' | sort -u | grep -E -- '-[0-9]+$')
    pair "check REAL / dump --verify-index REAL (every partition)" "<=1.1" "check|real" -- \
      "$K" check -q "$REAL" :: "$K" dump --verify-index "${REALPARTS[@]}"
  else
    row "check REAL / dump --verify-index REAL (every partition)" "$REAL absent" "-" "-" "-" "<=1.1" SKIP
  fi
  logdir check500 500 4KiB
  logdir check5000 5000 4KiB
  warm "$DATA/check500" "$DATA/check5000"
  timed "$RUNS" "check|5000 partitions" - "check|500 partitions" -- \
    "$K" check -q "$DATA/check5000" :: "$K" dump --verify-index -o json "$DATA/check5000" :: "$K" check -q "$DATA/check500"
  # Per partition: the time of 5,000 over ten times the time of 500.
  per=$(awk -v a="$(cut -d' ' -f1 <<<"${OUT[0]}")" -v b="$(cut -d' ' -f1 <<<"${OUT[2]}")" 'BEGIN{printf "%.2f", (b > 0 ? a/(10*b) : 0)}')
  percpu=$(awk -v a="$(cut -d' ' -f6 <<<"${OUT[0]}")" -v b="$(cut -d' ' -f6 <<<"${OUT[2]}")" 'BEGIN{printf "%.2f", (b > 0 ? a/(10*b) : 0)}')
  row "check per partition: 5000 partitions / 500" "$(spread "${OUT[0]}")" "$(spread "${OUT[2]}") ×10" "$per" "$percpu" "<=1.2" "$(judge "$per" "<=1.2")"
  cmp_row "  check 5000 partitions / dump --verify-index 5000 partitions" "-" "${OUT[0]}" "${OUT[1]}"
fi
# progress_row NAME "CMD": CMD with stderr on a pty (the progress line
# drawn from the start) against the same with stderr on a pipe; more runs,
# and the 4 GiB segment unless -q, as the difference sought is small.
progress_row() {
  timed $((RUNS * 4 + 1)) - - -- \
    KSEG_PROGRESS_DELAY=0 "$BIN/ptyrun" -tty -- "$K" $2 :: KSEG_PROGRESS_DELAY=0 "$BIN/ptyrun" -- "$K" $2
  cmp_row "progress line on a terminal: $1 / no terminal" "<=1.02" "${OUT[0]}" "${OUT[1]}"
}
PSEG=${SEG:-} PDIR=${MIXED:-}
if [ $QUICK = 0 ]; then PSEG=${BIG:-}/00000000000000000000.log PDIR=${BIG:-}; fi
if want progress; then
  [ $QUICK = 1 ] || warm "$BIG"
  progress_row dump "dump -o json $PSEG"
  progress_row replay-psm "replay-psm --from-snapshot none $PDIR"
fi

# rss1 LABEL [@setup S] CMD...: one run, for its peak RSS (none when a timed
# run already gave LABEL's).
rss1() {
  [ -n "${RSS[$1]:-}" ] && return
  local label=$1; shift
  timed 1 "$label" -- "$@"
}
if want rss; then
  # Peak resident memory of every command on every size, flat in the size.
  # Commands already timed above are not run again.
  D=$SCRATCH/rss
  sizes=("$SIZE|$MIXED|$MIRROR")
  [ $QUICK = 0 ] && sizes+=("4 GiB|$BIG|$BIGMIRROR")
  for s in "${sizes[@]}"; do
    IFS='|' read -r name src mir <<<"$s"
    rss1 "dump|$name" "$K" dump -o json "$src"
    rss1 "dump --deep --print-data|$name" "$K" dump --deep --print-data -o json "$src"
    rss1 "dump --verify-index|$name" "$K" dump --verify-index -o json "$mir"
    rss1 "replay-psm|$name" "$K" replay-psm --from-snapshot none "$src"
    rss1 "verify-chain|$name" "$K" verify-chain "$src" "$mir"
    rss1 "digest|$name" "$K" digest -q "$src"
    rss1 "mirror|$name" @setup "rm -rf '$D' '$D.bk' && mkdir '$D'" "$K" mirror --backup-dir "$D.bk" "$src" "$D/bench-0"
    rm -rf "$D" "$D.bk"
    rss1 "inject-barrier --dry-run|$name" "$K" inject-barrier --dry-run "$mir"
    rss1 "repair --dry-run|$name" "$K" repair --dry-run "$mir"
  done
  rss1 "verify-mm2|512 MiB" "$K" verify-mm2 "$MM2SRC" "$MM2REP"
  for s in "1000 partitions|$LOGDIR" "1 big + 999 small|$MIXLOG"; do
    IFS='|' read -r name dir <<<"$s"
    rss1 "dump|$name" "$K" dump -o json "$dir"
    rss1 "dump --deep --print-data|$name" "$K" dump --deep --print-data -o json "$dir"
    rss1 "replay-psm|$name" "$K" replay-psm -o json "$dir"
  done
fi

# rss_row SIZE: the verdict on the peak RSS of every command run on SIZE.
rss_row() {
  local k peak=0 who=""
  for k in "${!RSS[@]}"; do
    [ "${k#*|}" = "$1" ] || continue
    if [ "${RSS[$k]}" -gt "$peak" ]; then peak=${RSS[$k]} who=${k%%|*}; fi
  done
  [ "$peak" -gt 0 ] || return 0
  row "peak RSS, $1 (every command)" "$((peak / 1024)) MiB ($who)" "-" "-" "-" "<=128 MiB" \
    "$([ "$peak" -le $((128 * 1024)) ] && echo PASS || echo FAIL)"
}
if want rss; then
  rss_row "$SIZE"
  if [ $QUICK = 0 ]; then rss_row "4 GiB"; fi
  rss_row "512 MiB"
  rss_row "100 GiB digests"
  rss_row "1000 partitions"
  rss_row "1 big + 999 small"
fi
# kseg check's, whatever groups ran (rss_row says nothing without it).
rss_row "5000 partitions"

table '%-66s | %-32s | %-32s | %-5s | %-5s | %-7s | %s\n'
if [ -n "${RSS[*]+x}" ] && [ ${#RSS[@]} -gt 0 ] 2>/dev/null; then
  # The peak RSS of every command: commands down, sizes across.
  mapfile -t cmds < <(for k in "${!RSS[@]}"; do echo "${k%%|*}"; done | sort -u)
  cols=()
  for s in "$SIZE" "4 GiB" "512 MiB" "100 GiB digests" "1000 partitions" "1 big + 999 small" "5000 partitions" "500 partitions" "real"; do
    for k in "${!RSS[@]}"; do [ "${k#*|}" = "$s" ] && { cols+=("$s"); break; }; done
  done
  echo
  printf '%-28s' "peak RSS (MiB)"
  for s in "${cols[@]}"; do printf ' | %-18s' "$s"; done
  echo
  for c in "${cmds[@]}"; do
    printf '%-28s' "$c"
    for s in "${cols[@]}"; do
      v=${RSS[$c|$s]:-}
      if [ -n "$v" ]; then printf ' | %-18s' "$((v / 1024))"; else printf ' | %-18s' "-"; fi
    done
    echo
  done
fi
exit $FAILED
