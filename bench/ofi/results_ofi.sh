#!/usr/bin/env bash
# The runs behind docs/results-ofi.md, all in one go (a few minutes on the 2-core machine):
#   1. bench/mpix_latency and bench/mpix_bw on host streams (--mode enqueue) for
#      --provider mpi, ofi:sockets, ofi:tcp, ofi:shm, and plain MPI from the host thread
#      (--mode mpi) as the floor;
#   2. sockets: native vs emulated triggers (MPIX_OFI_NATIVE_TRIGGER=1 / 0), interleaved REPS
#      times, then the same pair with sockets' progress thread not spinning
#      (FI_SOCKETS_PE_WAITTIME=0);
#   3. where the time goes, both trigger modes: the agent's per-op stages (MPIX_PROFILE=1, 8 B
#      ping-pong) and bench/ofi/mpix_ofi_stages (arming and firing 256 ops).
# JSON of every run goes to OUT (bench JSON as written by the benchmarks; profile-*.json from
# the MPIX_PROFILE lines), the console output to OUT/run.log.
# Usage: bench/ofi/results_ofi.sh [BUILD_DIR] [OUT_DIR]    (REPS=3 by default)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=${2:-docs/data/ofi}
reps=${REPS:-3}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
log=$out/run.log
: >"$log"
run() {  # the command line goes to the log, the output to the log and the console
  echo "\$ $*" | tee -a "$log"
  env "$@" 2>&1 | tee -a "$log"
}
mpirun2=(mpirun -np 2 --oversubscribe --bind-to none)
lat=("$build/bench/mpix_latency" -m 8:1048576 -i 200 -x 20)
bw=("$build/bench/mpix_bw" -m 8:1048576 -i 20 -x 2 -W 64)

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit: $(git rev-parse --short HEAD)"
  echo "host: $(uname -srm), $(nproc) cores"
  echo "libfabric: $(fi_info --version | tr '\n' ' ')"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee -a "$log"

# 1. Each provider, host streams; plain MPI as the floor.
run "${mpirun2[@]}" "${lat[@]}" --mode mpi --json "$out/latency-plain-mpi.json"
run "${mpirun2[@]}" "${bw[@]}" --mode mpi --json "$out/bw-plain-mpi.json"
for p in mpi ofi:sockets ofi:tcp ofi:shm; do
  n=${p/:/-}
  run "${mpirun2[@]}" "${lat[@]}" --mode enqueue --provider "$p" --json "$out/latency-$n.json"
  run "${mpirun2[@]}" "${bw[@]}" --mode enqueue --provider "$p" --json "$out/bw-$n.json"
done

# 2. sockets: native vs emulated, interleaved so that load changes hit both alike.
for r in $(seq 1 "$reps"); do
  for nt in 1 0; do
    m=$([ $nt = 1 ] && echo native || echo emulated)
    run MPIX_OFI_NATIVE_TRIGGER=$nt "${mpirun2[@]}" "${lat[@]}" --mode enqueue \
      --provider ofi:sockets --json "$out/latency-sockets-$m-r$r.json"
  done
done
for nt in 1 0; do
  m=$([ $nt = 1 ] && echo native || echo emulated)
  run FI_SOCKETS_PE_WAITTIME=0 MPIX_OFI_NATIVE_TRIGGER=$nt "${mpirun2[@]}" "${lat[@]}" \
    --mode enqueue --provider ofi:sockets --json "$out/latency-sockets-$m-pewait0.json"
done

# 3. Stages.
for pe in 10 0; do
  for nt in 1 0; do
    m=$([ $nt = 1 ] && echo native || echo emulated)
    tag=$m-pewait$pe
    run FI_SOCKETS_PE_WAITTIME=$pe MPIX_PROFILE=1 MPIX_OFI_NATIVE_TRIGGER=$nt "${mpirun2[@]}" \
      "$build/bench/mpix_latency" -m 8:8 -i 500 -x 20 --mode enqueue --provider ofi:sockets \
      | tee "$out/profile-sockets-$tag.txt"
    python3 - "$out/profile-sockets-$tag.txt" "$out/profile-sockets-$tag.json" "$m" "$pe" <<'EOF'
import json, re, sys
rows = []
latency = None
for line in open(sys.argv[1]):
    m = re.match(r'mpix\[(\d+)\] profile: (.*?)\s+\((.*)\)\s+n=(\d+)\s+median\s+([\d.]+) us\s+p90\s+([\d.]+) us', line)
    if m:
        rows.append({"rank": int(m[1]), "stage": m[2].strip(), "what": m[3], "n": int(m[4]),
                     "median_us": float(m[5]), "p90_us": float(m[6])})
    m = re.match(r'^8\s+([\d.]+)$', line.strip())
    if m:
        latency = float(m[1])
json.dump({"benchmark": "mpix_latency 8 B, MPIX_PROFILE=1", "provider": "ofi:sockets",
           "trigger": sys.argv[3], "FI_SOCKETS_PE_WAITTIME": int(sys.argv[4]),
           "avg_latency_us": latency, "stages": rows}, open(sys.argv[2], "w"), indent=1)
EOF
    rm "$out/profile-sockets-$tag.txt"
    run FI_SOCKETS_PE_WAITTIME=$pe MPIX_PROVIDER=ofi MPIX_OFI_PROVIDER=sockets \
      MPIX_OFI_NATIVE_TRIGGER=$nt "${mpirun2[@]}" "$build/bench/ofi/mpix_ofi_stages" 256 8 10 \
      "$out/stages-sockets-$tag.json"
  done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
