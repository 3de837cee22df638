#!/bin/bash
# Session 23: ofi old (27cfc96) vs new (cd9a214) on host streams, alternating old/new, 3 runs each.
# Usage: run.sh OUTDIR   (trees in /work/ofi-old and /work/ofi-new, built RelWithDebInfo)
out=${1:?outdir}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
       OMPI_MCA_btl_vader_single_copy_mechanism=none FI_SOCKETS_PE_WAITTIME=0
log=$out/run.log
echo "start $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
for r in 1 2 3; do
  for v in old new; do
    t=/work/ofi-$v
    for P in ofi:tcp ofi:shm ofi:sockets mpi; do
      p=${P#ofi:}
      for b in lat bw; do
        if [ $b = lat ]; then
          cmd="$t/build/bench/mpix_latency -m 8:1048576 -i 200 -x 20 --mode enqueue --provider $P"
        else
          cmd="$t/build/bench/mpix_bw -m 8:1048576 -i 20 -x 2 -W 64 --mode enqueue --provider $P"
        fi
        f=$out/$b-$p-$v-r$r
        t0=$(date +%s.%N); l0=$(cut -d' ' -f1-3 /proc/loadavg)
        timeout 120 mpirun -np 2 --oversubscribe --bind-to none $cmd --json $f.json > $f.txt 2>&1
        rc=$?
        t1=$(date +%s.%N)
        printf '%s %-22s rc=%d %6.1fs load-before %s\n' "$(date -u +%TZ)" "$b-$p-$v-r$r" $rc \
          "$(echo "$t1 - $t0" | bc)" "$l0" >> $log
      done
    done
  done
done
echo "end $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
