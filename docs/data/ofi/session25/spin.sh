#!/bin/bash
# Session 25: MPIX_SPIN_US swept on one build (dd5bb16, Backoff's phases end after a time read
# at every pause), host streams, np2, ROUNDS rounds alternating the settings.
# Usage: [ROUNDS=N] [SPINS="0 20 150"] spin.sh OUTDIR   (Release tree /work/s25-new2/build)
out=${1:?outdir}
mkdir -p $out
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
       OMPI_MCA_btl_vader_single_copy_mechanism=none FI_SOCKETS_PE_WAITTIME=0
t=${TREE:-/work/s25-new2/build}
log=$out/run.log
echo "start $(date -u +%FT%TZ) load $(cat /proc/loadavg) tree $t" >> $log
for P in ${PROVS:-mpi ofi:shm ofi:tcp}; do
  p=${P#ofi:}
  for b in ${BENCHES:-lat bw}; do
    for r in $(seq 1 ${ROUNDS:-3}); do
      for v in ${SPINS:-0 20 150}; do
        if [ $b = lat ]; then
          cmd="$t/bench/mpix_latency -m 8:1048576 -i 200 -x 20 --mode enqueue --provider $P"
        else
          cmd="$t/bench/mpix_bw -m 8:1048576 -i 20 -x 2 -W 64 --mode enqueue --provider $P"
        fi
        f=$out/$b-$p-spin$v-r$r
        MPIX_SPIN_US=$v timeout 120 mpirun -np 2 --bind-to none -x MPIX_SPIN_US $cmd --json $f.json > $f.txt 2>&1
        printf '%s %-20s rc=%d load %s\n' "$(date -u +%TZ)" "$b-$p-spin$v-r$r" $? \
          "$(cut -d' ' -f1-3 /proc/loadavg)" >> $log
      done
    done
  done
done
echo "end $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
