#!/bin/bash
# Session 24, diagnostic: with the synchronize fix (after), do the few-CPU settings still pay?
# tcp bandwidth only. Per round: after, after MPIX_HANDOFF_YIELD=off, after MPIX_BUSY_POLL_US=0, back to back.
out=${1:?outdir}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
       OMPI_MCA_btl_vader_single_copy_mechanism=none
t=/work/bis-new/build
log=$out/run.log
echo "start $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
for P in ofi:tcp; do
  p=${P#ofi:}
  for b in bw; do
    for r in 1 2 3; do
      for e in default MPIX_HANDOFF_YIELD=off MPIX_BUSY_POLL_US=0 MPIX_BUSY_YIELD_US=0; do
        if [ $b = lat ]; then
          cmd="$t/bench/mpix_latency -m 8:1048576 -i 200 -x 20 --mode enqueue --provider $P"
        else
          cmd="$t/bench/mpix_bw -m 8:1048576 -i 20 -x 2 -W 64 --mode enqueue --provider $P"
        fi
        f=$out/$b-$p-${e%%=*}-r$r
        t0=$(date +%s.%N)
        env ${e/default/X=1} timeout 120 mpirun -np 2 --bind-to none $cmd --json $f.json > $f.txt 2>&1
        rc=$?
        printf '%s %-40s rc=%d %6.1fs load %s\n' "$(date -u +%TZ)" "$b-$p-$e-r$r" $rc \
          "$(echo "$(date +%s.%N) - $t0" | bc)" "$(cut -d' ' -f1-3 /proc/loadavg)" >> $log
      done
    done
  done
done
echo "end $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
