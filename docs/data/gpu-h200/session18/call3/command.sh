#!/bin/bash
# Session 18 call 3: old (96e8712, carried as old/) against new (a fused receive kernel carries
# the other waits of its MPIX_Waitall_enqueue): host cost per call of a halo exchange
# (mpix_latency --mode exchange-cpu, D D 8 B) and the halo benchmark, alternating; where perf
# exists, where a D D exchange's host time goes.
budget=${1:-420}
source scripts/device_prologue.sh
M+=(-x MPIX_GPU_DIRECT_EAGER_MAX -x MPIX_DEFER_TRIGGER)
(cmake -S old -B build-old -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPIX_ENABLE_CUDA=ON \
  -DMPIX_ENABLE_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure_old.log" 2>&1 &&
  cmake --build build-old -j "$(nproc)" --target mpix_latency mpix_halo > "$out/build_old.log" 2>&1)
log "old built rc=$?"
{ which perf ltrace strace nsys; } > $out/tools.txt 2>&1
X=(--set kernel=write --buffers "D D" --mode exchange-cpu -m 8:8 -i 5000 -x 200)
for rep in 1 2 3; do
  for b in old gpu; do
    left && { timeout -k 5 60 "${M[@]}" build-$b/bench/mpix_latency -d cuda "${X[@]}" > $out/xcpu_${b}_$rep.txt 2>&1; log "xcpu $b $rep rc=$?"; }
  done
done
for rep in 1 2; do
  for b in old gpu; do
    left && { timeout -k 5 90 "${M[@]}" build-$b/bench/mpix_halo --device cuda --seconds 1 --reps 3 --sizes 64,1024 --variants classic,mpix > $out/halo_${b}_$rep.txt 2>&1; log "halo $b $rep rc=$?"; }
  done
done
if command -v perf > /dev/null; then
  cat > /tmp/perf_rank.sh <<'EOS'
#!/bin/bash
if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then exec perf record -g -o /tmp/perf.data "$@"; else exec "$@"; fi
EOS
  chmod +x /tmp/perf_rank.sh
  left && { timeout -k 5 90 "${M[@]}" /tmp/perf_rank.sh build-gpu/bench/mpix_latency -d cuda "${X[@]}" > $out/perf_run.txt 2>&1; log "perf rc=$?"; }
  perf report -i /tmp/perf.data --stdio --no-children --sort comm,dso,symbol 2> /dev/null | head -150 > $out/perf_self.txt
  perf report -i /tmp/perf.data --stdio --children --sort comm,symbol -g none 2> /dev/null | grep -v "^$" | head -120 > $out/perf_children.txt
fi
