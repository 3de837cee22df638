#!/bin/bash
# Session 25: host streams, the ofi providers, two builds alternating, ROUNDS rounds (default 3):
#   old 06f7803 (session 24's last commit)
#   new c507b6b (the agent keeps its core between polls only for ofi ops of more than 4 KiB)
#   new2 dd5bb16 (and Backoff's phases end after a time read at every pause; reverted)
#   new3 dd5bb16 with the yield phase read every 64 yields again (not kept)
#   new4 c507b6b + on few CPUs a waiter not busy yields instead of spinning (= 12cbe14's code)
#   head 12cbe14 (c507b6b, thread names, dd5bb16 reverted, new4's change)
# Usage: [ROUNDS=N] [BENCHES="lat bw"] [BUILDS="old new new2"] [PROVS="mpi ofi:shm ofi:tcp"] run.sh OUTDIR
#   (Release trees /work/s25-<build>/build, each `cmake -DCMAKE_BUILD_TYPE=Release`, targets
#   mpix_latency mpix_bw mpix_scale; new3 and new4 are worktrees with the change applied)
out=${1:?outdir}
mkdir -p $out
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
       OMPI_MCA_btl_vader_single_copy_mechanism=none FI_SOCKETS_PE_WAITTIME=0
declare -A dir=([old]=/work/s25-old/build [new]=/work/s25-new/build [new2]=/work/s25-new2/build [new3]=/work/s25-new3/build [new4]=/work/s25-new4/build [head]=/work/s25-head/build)
log=$out/run.log
echo "start $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
for P in ${PROVS:-ofi:shm ofi:tcp}; do
  p=${P#ofi:}
  for b in ${BENCHES:-lat bw}; do
    for r in $(seq 1 ${ROUNDS:-3}); do
      for v in ${BUILDS:-old new}; do
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
        printf '%s %-18s rc=%d %6.1fs load %s\n' "$(date -u +%TZ)" "$b-$p-$v-r$r" $rc \
          "$(echo "$(date +%s.%N) - $t0" | bc)" "$(cut -d' ' -f1-3 /proc/loadavg)" >> $log
      done
    done
  done
done
echo "end $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
