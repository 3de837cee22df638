#!/bin/bash
# Session 24: host streams, three builds alternating per benchmark and provider, 3 rounds:
#   old    27cfc96 (where issue 14 began)
#   before cc54b4c (session 23's last commit)
#   after  1b62072 (a synchronize() woken once, not after every item); set B: 0b739ec (and the
#          agent yields after completions only once nothing is left in flight)
# Usage: run.sh OUTDIR  (Release trees: /work/bis-old/build, /work/bis-head/build, /work/bis-new/build)
out=${1:?outdir}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
       OMPI_MCA_btl_vader_single_copy_mechanism=none FI_SOCKETS_PE_WAITTIME=0
declare -A dir=([old]=/work/bis-old/build [before]=/work/bis-head/build [after]=/work/bis-new/build)
log=$out/run.log
echo "start $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
for P in mpi ofi:shm ofi:tcp; do
  p=${P#ofi:}
  for b in lat bw; do
    for r in 1 2 3; do
      for v in old before after; do
        t=${dir[$v]}
        if [ $b = lat ]; then
          cmd="$t/bench/mpix_latency -m 8:1048576 -i 200 -x 20 --mode enqueue --provider $P"
        else
          cmd="$t/bench/mpix_bw -m 8:1048576 -i 20 -x 2 -W 64 --mode enqueue --provider $P"
        fi
        f=$out/$b-$p-$v-r$r
        t0=$(date +%s.%N)
        timeout 120 mpirun -np 2 --bind-to none $cmd --json $f.json > $f.txt 2>&1
        rc=$?
        printf '%s %-22s rc=%d %6.1fs load %s\n' "$(date -u +%TZ)" "$b-$p-$v-r$r" $rc \
          "$(echo "$(date +%s.%N) - $t0" | bc)" "$(cut -d' ' -f1-3 /proc/loadavg)" >> $log
      done
    done
  done
done
echo "end $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
