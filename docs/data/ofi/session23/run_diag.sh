#!/bin/bash
# Session 23, diagnostic: which new setting costs the windowed bandwidth. Per round: old, new,
# new MPIX_HANDOFF_YIELD=off, new MPIX_BUSY_POLL_US=0, new MPIX_HOST_STREAM_SPIN_US=0, back to back.
out=${1:?outdir}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
       OMPI_MCA_btl_vader_single_copy_mechanism=none FI_SOCKETS_PE_WAITTIME=0
log=$out/run.log
echo "start $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
for P in mpi ofi:shm ofi:tcp; do
  p=${P#ofi:}
  for b in bw lat; do
    for r in 1 2 3; do
      for c in old new new-hyoff new-bp0 new-hs0; do
        case $c in old) t=/work/ofi-old; e=;; new) t=/work/ofi-new; e=;;
          new-hyoff) t=/work/ofi-new; e="-x MPIX_HANDOFF_YIELD=off";;
          new-bp0) t=/work/ofi-new; e="-x MPIX_BUSY_POLL_US=0";;
          new-hs0) t=/work/ofi-new; e="-x MPIX_HOST_STREAM_SPIN_US=0";; esac
        if [ $b = lat ]; then
          cmd="$t/build/bench/mpix_latency -m 8:1048576 -i 200 -x 20 --mode enqueue --provider $P"
        else
          cmd="$t/build/bench/mpix_bw -m 8:1048576 -i 20 -x 2 -W 64 --mode enqueue --provider $P"
        fi
        f=$out/$b-$p-$c-r$r
        l0=$(cut -d' ' -f1-3 /proc/loadavg)
        timeout 120 mpirun -np 2 --oversubscribe --bind-to none $e $cmd --json $f.json > $f.txt 2>&1
        printf '%s %-26s rc=%d load-before %s\n' "$(date -u +%TZ)" "$b-$p-$c-r$r" $? "$l0" >> $log
      done
    done
  done
done
echo "end $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
