#!/bin/bash
# Session 34 call 2: (1) the stacks of gpu_pipeline hanging with hostfn triggers and announced
# sends (old = 0659c2a with the session-33 guard taken out, as in call 1, where the watchdog
# ended the ranks before the debugger came); (2) D D one way old (0659c2a) / new (the gate
# kernel) at 128 KiB-8 MiB with more iterations than call 1, three rounds.
budget=${1:-200}
source scripts/device_prologue.sh
build_old gpu_pipeline mpix_latency
M+=(-x MPIX_GPU_DIRECT_ANNOUNCE -x MPIX_TRIGGER -x MPIX_LOG_LEVEL -x MPIX_LOG_SUBSYS)
MPIX_TRIGGER=hostfn MPIX_GPU_DIRECT_ANNOUNCE=always timeout -k 5 70 "${M[@]}" \
  build-old/test/gpu/gpu_pipeline "*device buffers*" > $out/hostfn_diag.txt 2>&1 &
sleep 15
D=$(command -v gdb || command -v cuda-gdb); log "debugger: ${D:-none}"
nvidia-smi > $out/hostfn_smi.txt 2>&1
for p in $(pgrep -f build-old/test/gpu/gpu_pipeline); do
  for t in /proc/$p/task/*; do echo "$t $(cat $t/comm) $(cat $t/wchan)"; cat $t/stack 2> /dev/null | head -8; done > $out/hostfn_tasks_$p.txt 2>&1
  [ -n "$D" ] && timeout 40 $D -p $p -batch -ex "thread apply all bt" > $out/hostfn_gdb_$p.txt 2>&1 &
done
wait; log "hostfn diag done"
pkill -9 -f build-old/ 2> /dev/null; mps_restart
G=(-d cuda --set kernel=write --buffers "D D" -i 2000 -x 100 -m 131072:8388608)
for rep in 1 2 3; do
  for v in old new; do
    b=build-gpu/bench; [ $v = old ] && b=build-old/bench
    left && { timeout -k 5 40 "${M[@]}" $b/mpix_latency "${G[@]}" --mode enqueue > $out/direct${rep}_$v.txt 2>&1; log "direct$rep $v rc=$?"; }
  done
done
