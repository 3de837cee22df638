#!/bin/bash
# alternating main vs streampoll, H H enqueue, 2-core machine
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
size=$1; iters=$2; reps=$3; out=$4
for r in $(seq 1 $reps); do
  for b in main stream; do
    if [ $b = main ]; then bin=/work/wt-main/build/bench/mpix_latency; else bin=/work/main/build/bench/mpix_latency; fi
    v=$(nice -n -15 timeout 300 mpirun --oversubscribe --bind-to ${BIND:-none} -np 2 $bin --mode enqueue -m $size:$size -i $iters -x 10 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $2}' | tail -1)
    echo "$b $size $r $v" | tee -a $out
  done
done
