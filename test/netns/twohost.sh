#!/usr/bin/env bash
# Two "hosts" on one machine: network namespaces A and B joined by a veth pair (10.77.0.1/24 in
# A, 10.77.0.2/24 in B, both ends named mpx0; nothing else in either namespace but loopback, so
# no traffic can leave them). mpirun runs in A and starts B's rank through a launch agent
# (plm_rsh_agent) that enters B. Open MPI only (its launcher flags).
#
# Usage: twohost.sh <mpirun> <twohost_test> ofi-tcp|mpi exchange|cut
#   exchange  data checked in both directions (twohost_test.cpp); the bytes crossed the veth.
#   cut       the link goes down (ip link set mpx0 down in A) while the ranks are exchanging:
#             each must get an MPI error within MPIX_TIMEOUT=3, and nothing may hang.
# Exit status: 0 pass, 1 fail, 77 skipped (not root, no ip, or namespaces cannot be made).
# Everything it makes (namespaces, veth, temporary files, processes) is removed on exit.
set -u
mpirun=$1 prog=$2 provider=$3 mode=$4
skip() { echo "twohost: SKIP: $*"; exit 77; }
die() { echo "twohost: FAILED: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces"
command -v ip >/dev/null || skip "no ip command (Debian: apt-get install iproute2)"
command -v timeout >/dev/null || skip "no timeout command"

nsA=mpixA$$ nsB=mpixB$$
dir=$(mktemp -d /tmp/mpix-twohost.XXXXXX)
mpirun_pid=
cleanup() {
  [ -n "$mpirun_pid" ] && kill -9 "$mpirun_pid" 2>/dev/null
  # Whatever is still running in the namespaces was started by this test (mpirun, orted, ranks).
  for ns in $nsA $nsB; do
    if ip netns list 2>/dev/null | grep -qw "$ns"; then
      for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
      ip netns del "$ns" 2>/dev/null  # Deletes its end of the veth, and with it the pair.
    fi
  done
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

ip netns add $nsA 2>/dev/null || skip "ip netns add failed (no CAP_SYS_ADMIN / CAP_NET_ADMIN?)"
ip netns add $nsB 2>/dev/null || skip "ip netns add failed"
# IPv4 only, so that the 10.77.0.x addresses are the only ones on the veth (no IPv6 link-local
# address whose scope means nothing in the peer's namespace).
for ns in $nsA $nsB; do
  ip netns exec $ns sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6 &&
    echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6' 2>/dev/null ||
    echo "twohost: note: cannot turn IPv6 off in $ns"
done
ip link add mpx0 netns $nsA type veth peer name mpx0 netns $nsB 2>/dev/null ||
  skip "cannot create a veth pair (no veth support?)"
inA() { ip netns exec $nsA "$@"; }
inB() { ip netns exec $nsB "$@"; }
inA ip addr add 10.77.0.1/24 dev mpx0 && inB ip addr add 10.77.0.2/24 dev mpx0 &&
  inA ip link set lo up && inB ip link set lo up &&
  inA ip link set mpx0 up && inB ip link set mpx0 up || die "setting up the veth pair"

# Open MPI's rsh launcher calls: <agent> <host> <command words for a remote shell>.
cat >"$dir/agent" <<EOF
#!/bin/sh
host=\$1; shift
[ "\$host" = 10.77.0.2 ] || { echo "twohost agent: unknown host \$host" >&2; exit 1; }
exec ip netns exec $nsB sh -c "\$*"
EOF
chmod +x "$dir/agent"

export TWOHOST_DIR=$dir MPIX_TIMEOUT=3
case $provider in
  ofi-tcp) export MPIX_PROVIDER=ofi MPIX_OFI_PROVIDER=tcp FI_PROVIDER=tcp FI_TCP_IFACE=mpx0 ;;
  mpi) export MPIX_PROVIDER=mpi ;;
  *) die "unknown provider $provider" ;;
esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
args=(-np 2 --host 10.77.0.1:1,10.77.0.2:1 --bind-to none
  --mca plm_rsh_agent "$dir/agent" --mca btl tcp,self
  --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24
  -x TWOHOST_DIR -x MPIX_TIMEOUT -x MPIX_PROVIDER)
[ "$provider" = ofi-tcp ] && args+=(-x MPIX_OFI_PROVIDER -x FI_PROVIDER -x FI_TCP_IFACE)
[ "$mode" = cut ] && args+=(--enable-recovery)  # Rank 0's _exit must not kill the job at once.

rx_bytes() { inB cat /sys/class/net/mpx0/statistics/rx_bytes; }
rx0=$(rx_bytes)
echo "twohost: $provider $mode: mpirun in $nsA, rank 1 through the agent into $nsB"
ip netns exec $nsA timeout -k 5 120 "$mpirun" "${args[@]}" "$prog" "$mode" &
mpirun_pid=$!

# Waits up to $2 seconds for file $1; 0 if it is there.
wait_for() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    [ -e "$1" ] && return 0
    kill -0 $mpirun_pid 2>/dev/null || { [ -e "$1" ]; return; }
    sleep 0.1
  done
  return 1
}
results() { for r in 0 1; do echo "twohost: rank $r: $(cat "$dir/result.$r" 2>/dev/null || echo 'no result')"; done; }

if [ "$mode" = cut ]; then
  wait_for "$dir/ready.0" 60 && wait_for "$dir/ready.1" 10 || { results; die "the ranks never reached the exchange"; }
  inA ip link set mpx0 down
  echo "twohost: link cut"
  # Each rank must see its error within MPIX_TIMEOUT (it checks that itself, +5 s of slack);
  # 3 + 15 s here before calling it a hang.
  if ! { wait_for "$dir/result.0" 18 && wait_for "$dir/result.1" 5; }; then
    results
    die "a rank is still in the exchange 18 s after the cut (MPIX_TIMEOUT=3): it hangs"
  fi
  # The link back up, so that B's orted can report to mpirun and the job ends.
  inA ip link set mpx0 up
fi
wait $mpirun_pid
rc=$?
mpirun_pid=
results
[ -e "$dir/netns.0" ] && [ -e "$dir/netns.1" ] || die "a rank did not start (mpirun status $rc)"
[ "$(cat "$dir/netns.0")" = "$(inA readlink /proc/self/ns/net)" ] || die "rank 0 is not in $nsA"
[ "$(cat "$dir/netns.1")" = "$(inB readlink /proc/self/ns/net)" ] || die "rank 1 is not in $nsB"
for r in 0 1; do
  [ "$(cat "$dir/result.$r" 2>/dev/null)" = ok ] || die "rank $r (mpirun status $rc)"
done
if [ "$mode" = exchange ]; then
  [ $rc = 0 ] || die "mpirun status $rc"
  # 2 x 3 x 2 exchanges of up to 4 MiB each way: well over 24 MiB must have reached B.
  rx=$(($(rx_bytes) - rx0))
  echo "twohost: $rx bytes reached $nsB over the veth"
  [ $rx -gt $((24 << 20)) ] || die "only $rx bytes crossed the veth"
fi
echo "twohost: PASSED ($provider $mode)"
