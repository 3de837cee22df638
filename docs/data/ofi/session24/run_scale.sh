#!/bin/bash
# Session 24: mpix_scale --sweep inflight, before (cc54b4c) / after (1b62072) alternating, 3 rounds.
out=${1:?outdir}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
       OMPI_MCA_btl_vader_single_copy_mechanism=none
declare -A dir=([before]=/work/bis-head/build [after]=/work/bis-new/build)
log=$out/run.log
echo "start $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
for r in 1 2 3; do
  for v in before after; do
    f=$out/scale-$v-r$r
    timeout 300 mpirun -np 2 --oversubscribe --bind-to none ${dir[$v]}/bench/mpix_scale \
      --sweep inflight -r 50 --json $f.json > $f.txt 2>&1
    echo "$(date -u +%TZ) scale-$v-r$r rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> $log
  done
done
echo "end $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
