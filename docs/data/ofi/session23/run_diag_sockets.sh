#!/bin/bash
# Session 23, diagnostic: sockets latency, old / new / new MPIX_HANDOFF_YIELD=off back to back, 3 rounds
# (CONFIGS="old new-bp0" ROUNDS="4 5 6": old against new with MPIX_BUSY_POLL_US=0).
out=${1:?outdir}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
       OMPI_MCA_btl_vader_single_copy_mechanism=none FI_SOCKETS_PE_WAITTIME=0
log=$out/run.log
echo "start sockets $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
for r in ${ROUNDS:-1 2 3}; do
  for c in ${CONFIGS:-old new new-hyoff}; do
    case $c in old) t=/work/ofi-old; e=;; new) t=/work/ofi-new; e=;;
      new-hyoff) t=/work/ofi-new; e="-x MPIX_HANDOFF_YIELD=off";;
      new-bp0) t=/work/ofi-new; e="-x MPIX_BUSY_POLL_US=0";; esac
    f=$out/lat-sockets-$c-r$r; l0=$(cut -d' ' -f1-3 /proc/loadavg)
    timeout 120 mpirun -np 2 --oversubscribe --bind-to none $e $t/build/bench/mpix_latency \
      -m 8:1048576 -i 200 -x 20 --mode enqueue --provider ofi:sockets --json $f.json > $f.txt 2>&1
    printf '%s %-26s rc=%d load-before %s\n' "$(date -u +%TZ)" "lat-sockets-$c-r$r" $? "$l0" >> $log
  done
done
echo "end sockets $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> $log
