#!/bin/bash
# Session 18: old (the CI clone's build of 3c5ea39) against new (one-CPU waits), each rank bound
# to one core, 2-core CPU machine, host streams; three alternating rounds; and unbound for scale.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
old=/work/ci2/build/bench/mpix_latency new=/work/main/build/bench/mpix_latency
out=/work/main/docs/data/cpu-2core/session18/bindcore; mkdir -p $out
for r in 1 2 3; do
  for b in old new; do
    eval bin=\$$b
    timeout 300 mpirun -np 2 --bind-to core $bin --mode enqueue -m 8:4194304 -i 100 -x 5 > $out/core_${b}_$r.txt 2>&1
  done
done
for b in old new; do eval bin=\$$b; timeout 300 mpirun -np 2 --bind-to none $bin --mode enqueue -m 8:4194304 -i 100 -x 5 > $out/none_${b}.txt 2>&1; done
