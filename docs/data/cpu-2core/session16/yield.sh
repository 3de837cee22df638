#!/bin/bash
# Session 16: the host stream's hand-off yield after every trigger write (old) against once
# before anything but another write (new), alternating, in one build that had a temporary
# switch (MPIX_EXP_OLD_WORKER_YIELD=1 selected the old policy; the switch is not on main).
# 2-core Debian 12 CPU machine, Open MPI 4.1.4, host streams, MPIX_HANDOFF_YIELD=auto (= on).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
out=${1:-.}
for i in 1 2 3; do
  for v in old new; do
    e=(); [ $v = old ] && e=(-x MPIX_EXP_OLD_WORKER_YIELD=1)
    timeout 600 nice -n -15 mpirun -np 2 --oversubscribe --bind-to none "${e[@]}" \
      build/bench/mpix_scale --sweep inflight -r 5 --json $out/inflight_${v}_$i.json > $out/inflight_${v}_$i.txt 2>&1
    timeout 600 nice -n -15 mpirun -np 2 --oversubscribe --bind-to none "${e[@]}" \
      build/bench/mpix_scale --sweep streams -r 5 --json $out/streams_${v}_$i.json > $out/streams_${v}_$i.txt 2>&1
    timeout 120 nice -n -15 mpirun -np 2 --oversubscribe --bind-to none "${e[@]}" \
      build/bench/mpix_latency --mode enqueue -m 8:8 -i 2000 > $out/lat_${v}_$i.txt 2>&1
    echo "$v $i done $(date +%T)"
  done
done
