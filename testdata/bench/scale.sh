#!/usr/bin/env bash
# testdata/bench/scale.sh — issue 29's targets: kseg's cost as one dimension
# of a broker's disk grows (partitions in a log directory, producers in a
# partition, records of the internal topics) and a deep dump's memory as
# the cores grow, each measured against a floor run on the same data in
# the same run. See docs/performance.md ("Scale").
#
#   testdata/bench/scale.sh [-n RUNS] [-d DATADIR] [-q] [-r RETRIES] [-t ONLY] [-k KSEG]
#
#   -n RUNS     runs per command; the median counts (default 3)
#   -d DATADIR  keep the generated data here and reuse it on the next run
#   -q          quick: 1,000 partitions instead of 5,000, 200,000 producers
#               instead of a million, 1M internal-topic records, not 10M
#   -r RETRIES  disturbed runs measure repeats per command (default 3)
#   -t ONLY     only these groups, comma-separated: partitions, producers,
#               internal, cores (default: all)
#   -k KSEG     time this kseg binary instead of one built from the tree
#
# The data comes from testdata/bench/scalegen (partitions of 256 KiB with
# the log directory's checkpoints listing every one, a partition of many
# producers with snapshots, __consumer_offsets and __transaction_state
# partitions); the floors are testdata/bench/crcfloor (a CRC walk of
# every .log), cat of every file, and testdata/bench/keyfloor (the latest
# value of every key of an internal topic, nothing decoded). CPU seconds
# are the figure to read on a shared machine; the ratios are of CPU.
set -euo pipefail
cd "$(dirname "$0")/../.."

. testdata/bench/common.sh
RUNS=3 DATA="" QUICK=0 RETRIES=3 ONLY=all KSEG=""
while getopts "n:d:qr:t:k:" opt; do
  case $opt in
    q) QUICK=1 ;;
    *) bench_opt "$opt" || { sed -n '2,25p' "$0"; exit 2; } ;;
  esac
done
workdirs scale
machine
build crcfloor keyfloor scalegen measure

# scalegen NAME ARGS...: DATA/NAME made by scalegen, kept with -d while
# made with the same arguments.
scalegen() {
  local dir=$DATA/$1; shift
  if ! fresh "$dir" "$*"; then
    rm -rf "$dir"
    "$BIN/scalegen" -out "$dir" "$@"
    stamp "$dir" "$*"
  fi
}
# timed CMD :: CMD ...: OUT[i] is measure's line for command i
# ("median min max rss_kib redone cpu_median").
timed() { mapfile -t OUT < <("$BIN/measure" -n "$RUNS" -retries "$RETRIES" -- "$@"); }
field() { cut -d' ' -f"$2" <<<"$1"; }
div() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", (b > 0 ? a/b : 0)}'; }
cpu() { printf "%.3fs CPU" "$(field "$1" 6)"; }
mib() { echo "$(( $(field "$1" 4) / 1024 )) MiB"; }

if want partitions; then
  # CPU per partition directory, flat from 100 to N partitions, and the
  # largest log directory against the CRC floor and cat.
  N=5000
  [ $QUICK = 1 ] && N=1000
  for n in 100 $N; do scalegen "p$n" -dim partitions -n "$n" -size 256KiB; done
  warm "$DATA/p100" "$DATA/p$N"
  declare -A CMDS=([dump]="dump --verify-index -o json" [replay-psm]="replay-psm --check-snapshots -o json" [groups]="groups -o json" [txns]="txns -o json")
  for name in dump replay-psm groups txns; do
    c=${CMDS[$name]}
    timed $K $c "$DATA/p100" :: $K $c "$DATA/p$N" :: "$BIN/crcfloor" "$DATA/p$N" :: sh -c "find '$DATA/p$N' -type f -exec cat {} +"
    per100=$(awk -v c="$(field "${OUT[0]}" 6)" 'BEGIN{printf "%.6f", c/100}')
    perN=$(awk -v c="$(field "${OUT[1]}" 6)" -v n="$N" 'BEGIN{printf "%.6f", c/n}')
    r=$(div "$perN" "$per100")
    row "$c LOGDIR: CPU per partition, $N / 100" "$(awk -v p="$perN" 'BEGIN{printf "%.3f ms", p*1000}')" \
      "$(awk -v p="$per100" 'BEGIN{printf "%.3f ms", p*1000}')" "$r" "$r" "<=1.3" "$(judge "$r" "<=1.3")"
    r=$(div "$(field "${OUT[1]}" 6)" "$(field "${OUT[2]}" 6)")
    row "$c LOGDIR ($N partitions) / crcfloor" "$(cpu "${OUT[1]}")" "$(cpu "${OUT[2]}")" "-" "$r" "<=2" "$(judge "$r" "<=2")"
    r=$(div "$(field "${OUT[1]}" 6)" "$(field "${OUT[3]}" 6)")
    row "$c LOGDIR ($N partitions) / cat" "$(cpu "${OUT[1]}")" "$(cpu "${OUT[3]}")" "-" "$r" "-" "-"
  done
fi

if want producers; then
  # Peak memory at a million producers: the state itself, not copies.
  P=1000000
  [ $QUICK = 1 ] && P=200000
  scalegen producers -dim producers -n "$P"
  D=$DATA/producers/many-0
  warm "$D"
  timed $K replay-psm "$D" :: $K replay-psm --check-snapshots "$D" :: $K inject-barrier --dry-run "$D" :: $K replay-psm -o json "$D"
  labels=("replay-psm" "replay-psm --check-snapshots" "inject-barrier --dry-run" "replay-psm -o json")
  for i in 0 1 2 3; do
    kib=$(field "${OUT[$i]}" 4)
    row "peak RSS, $P producers: ${labels[$i]}" "$(mib "${OUT[$i]}") ($(( kib * 1024 / P )) B/producer)" "-" "-" "-" "<=256 MiB" \
      "$([ "$kib" -le $((256 * 1024)) ] && echo PASS || echo FAIL)"
  done
fi

if want internal; then
  # groups and txns against the floor that keeps the latest value of
  # every key: CPU and peak memory, at 1M records and (without -q) 10M.
  sets=("g1m|groups|-dim groups -n 1000000 -keys 100000|__consumer_offsets-0" "t100k|txns|-dim txns -n 100000|__transaction_state-0")
  [ $QUICK = 0 ] && sets+=("g10m|groups|-dim groups -n 10000000 -keys 1000000|__consumer_offsets-0" "t1m|txns|-dim txns -n 1000000|__transaction_state-0")
  for s in "${sets[@]}"; do
    IFS='|' read -r name cmd args part <<<"$s"
    # shellcheck disable=SC2086
    scalegen "$name" $args
    warm "$DATA/$name"
    timed $K $cmd -o json "$DATA/$name" :: "$BIN/keyfloor" "$DATA/$name/$part"
    recs=$(sed 's/.*-n \([0-9]*\).*/\1/' <<<"$args")
    [ "$cmd" = txns ] && recs=$((recs * 10))
    r=$(div "$(field "${OUT[0]}" 6)" "$(field "${OUT[1]}" 6)")
    row "$cmd ($recs records) / keyfloor: CPU" "$(cpu "${OUT[0]}")" "$(cpu "${OUT[1]}")" "-" "$r" "<=2" "$(judge "$r" "<=2")"
    r=$(div "$(field "${OUT[0]}" 4)" "$(field "${OUT[1]}" 4)")
    row "$cmd ($recs records) / keyfloor: peak RSS" "$(mib "${OUT[0]}")" "$(mib "${OUT[1]}")" "$r" "-" "<=1.5" "$(judge "$r" "<=1.5")"
  done
fi

if want cores; then
  # dump --deep's peak memory at GOMAXPROCS=16 against 2, on a segment of
  # zstd batches of 32 MiB each (128 KiB of random key, so one batch a
  # pipeline job) under a cap of 64 MiB, batches at half the cap: the
  # renderers share one budget of decompressed bytes (the cap, at least
  # 64 MiB).
  scalegen cores -dim zstd -n 32
  F=$DATA/cores/zeros-0
  timed GOMAXPROCS=16 $K dump --deep -o json --max-decompressed-bytes 67108864 "$F" :: \
    GOMAXPROCS=2 $K dump --deep -o json --max-decompressed-bytes 67108864 "$F"
  r=$(div "$(field "${OUT[0]}" 4)" "$(field "${OUT[1]}" 4)")
  row "dump --deep peak RSS: GOMAXPROCS=16 / GOMAXPROCS=2" "$(mib "${OUT[0]}")" "$(mib "${OUT[1]}")" "$r" "-" "<=1.5" "$(judge "$r" "<=1.5")"
fi

table '%-74s | %-28s | %-22s | %-5s | %-5s | %-9s | %s\n'
exit $FAILED
