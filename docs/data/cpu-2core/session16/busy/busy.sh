#!/bin/bash
# Session 16: busy polling on fewer than 4 CPUs only while a transfer past the eager limit is
# posted (branch busylarge, dd363bb) against main (f5b972b), alternating; both built with CUDA
# off in worktrees (/tmp/bltree, /tmp/newtree). 2-core Debian 12 CPU machine, host streams.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
out=${1:-.}
R=(timeout 300 nice -n -15 mpirun -np 2 --oversubscribe --bind-to none)
for i in 1 2 3; do
  for v in main busylarge; do
    b=/tmp/newtree/build; [ $v = busylarge ] && b=/tmp/bltree/build
    "${R[@]}" $b/bench/mpix_halo --device host --sizes 64,1024 --reps 3 --seconds 0.5 \
      --variants classic,mpix > $out/halo_${v}_$i.txt 2>&1
    "${R[@]}" $b/bench/mpix_latency --mode enqueue -m 8:8 -i 2000 > $out/lat8_${v}_$i.txt 2>&1
    "${R[@]}" $b/bench/mpix_latency --mode enqueue -m 65536:1048576 -i 100 -x 10 > $out/latbig_${v}_$i.txt 2>&1
    "${R[@]}" $b/bench/mpix_scale --sweep inflight -r 5 --max 1000 > $out/scale_${v}_$i.txt 2>&1
    echo "$v $i $(date +%T)"
  done
done
