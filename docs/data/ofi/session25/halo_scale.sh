#!/bin/bash
# Session 25: the halo benchmark (host streams) and mpix_scale, old 06f7803 against head
# (12cbe14), alternating per run, ROUNDS rounds.
# Usage: [ROUNDS=N] [BENCHES="halo scale_inflight scale_streams"] halo_scale.sh OUTDIR   (Release trees /work/s25-old/build, /work/s25-head/build)
out=${1:?outdir}
mkdir -p $out
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
       OMPI_MCA_btl_vader_single_copy_mechanism=none FI_SOCKETS_PE_WAITTIME=0
log=$out/run.log
echo "start $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
for r in $(seq 1 ${ROUNDS:-3}); do
  for v in old head; do
    t=/work/s25-$v/build
    for b in ${BENCHES:-halo scale_inflight scale_streams}; do
      case $b in
        halo) cmd="$t/bench/mpix_halo --device host --sizes 64,1024 --reps 3 --seconds 0.5 --variants classic,mpix" ;;
        scale_inflight) cmd="$t/bench/mpix_scale --sweep inflight -r 50" ;;
        scale_streams) cmd="$t/bench/mpix_scale --sweep streams -r 10" ;;
      esac
      f=$out/$b-$v-r$r
      timeout 300 mpirun -np 2 --oversubscribe --bind-to none $cmd --json $f.json > $f.txt 2>&1
      printf '%s %-24s rc=%d load %s\n' "$(date -u +%TZ)" "$b-$v-r$r" $? \
        "$(cut -d' ' -f1-3 /proc/loadavg)" >> $log
    done
  done
done
echo "end $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
