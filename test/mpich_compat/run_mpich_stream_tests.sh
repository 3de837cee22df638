#!/bin/bash
# Builds MPICH's own stream tests against an mpix build, unchanged, and runs them with Open MPI's
# mpirun. MPICH's sources are not part of mpix: point MPICH_SRC at an MPICH source tree (its
# test/mpi/impls/mpich/{comm,cuda}/ hold the tests). mpitest.h beside this script is mpix's own
# small stand-in for MPICH's test harness (MTest_Init, MTest_Finalize, ...).
# Usage: MPICH_SRC=DIR run_mpich_stream_tests.sh BUILD_DIR host|cuda [mpirun extra args...]
set -u
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
src=${MPICH_SRC:?set MPICH_SRC to an MPICH source tree}/test/mpi/impls/mpich
B=$(cd "$1" && pwd); mode=$2; shift 2
out=${OUT:-$here/out}; mkdir -p "$out"
inc="-I$root/mpix/compat -I$root/mpix -I$here"
lib="-L$B/src -Wl,-rpath,$B/src -lmpix"
mr=(mpirun --oversubscribe --bind-to none "$@")
fail=0
run() { # name ranks exe args
  local n=$1 r=$2; shift 2
  timeout -k 5 120 "${mr[@]}" -np "$r" "$@" > "$out/mpich_$n.log" 2>&1; local rc=$?
  if [ $rc = 0 ] && grep -q "No Errors" "$out/mpich_$n.log"; then echo "mpich $n np$r: PASS"
  else echo "mpich $n np$r: FAIL rc=$rc"; tail -15 "$out/mpich_$n.log"; fail=1; fi
}
if [ "$mode" = host ]; then
  src_dir=$src
  for t in stream stream_comm stream_comm_dup stream_multiplex; do
    src="$src_dir/comm/$t.c"
    if ! mpicc -std=gnu11 $inc "$src" -o "$out/$t" $lib > "$out/cc_$t.log" 2>&1; then
      echo "mpich $t: COMPILE FAIL as published:"; grep error "$out/cc_$t.log"
      # MPICH's stream_multiplex.c declares test_stream_send(MPIX_Stream, ...) but defines it
      # with MPI_Comm: conflicting types under any MPI whose two handle types differ (MPICH's
      # own included). Fix that one prototype and go on.
      sed 's/static int test_stream_send(MPIX_Stream stream, int src_idx, int dst_idx);/static int test_stream_send(MPI_Comm stream_comm, int src_idx, int dst_idx);/' \
        "$src" > "$out/${t}_fixed.c"
      echo "  retrying with the prototype fixed: $(diff "$src" "$out/${t}_fixed.c" | grep '^>')"
      src="$out/${t}_fixed.c"
      mpicc -std=gnu11 $inc "$src" -o "$out/$t" $lib > "$out/cc_$t.log" 2>&1 ||
        { echo "mpich $t: COMPILE FAIL"; cat "$out/cc_$t.log"; fail=1; continue; }
    fi
    [ -s "$out/cc_$t.log" ] && { echo "  $t compiler output:"; cat "$out/cc_$t.log"; }
    run $t 2 "$out/$t"
  done
else
  for t in stream stream_allred; do
    nvcc -arch=sm_90 -ccbin mpicxx $inc "$src/cuda/$t.cu" -o "$out/$t" -L$B/src -Xlinker -rpath=$B/src -lmpix -lcudart > "$out/cc_$t.log" 2>&1 ||
      { echo "mpich $t: COMPILE FAIL"; cat "$out/cc_$t.log"; fail=1; continue; }
  done
  run cuda_stream 2 "$out/stream"
  run cuda_stream_progress_thread 2 "$out/stream" -progress-thread
  run cuda_stream_allred 4 "$out/stream_allred"
fi
exit $fail
