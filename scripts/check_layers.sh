#!/usr/bin/env bash
# Checks that no #include "..." in the library runs back up a layer (docs/guide.md, "the source
# layers"; ARCHITECTURE P4). Layers, bottom up; a folder includes its own files and those of
# lower layers only, never a folder of its own layer or a higher one:
#   0 src/base         status, log, settings machinery, signal words, waiter, profile
#   1 src/gpu          stream backends (host, cuda, hip) behind gpu/backend.hpp
#   2 src/core         the engine; sees providers through core/provider.hpp
#   3 providers        network providers (mpi, ofi), implementing core/provider.hpp
#   3 src/api          the C entry points of the stream API
#   4 src/queue        front end: MPIX_Queue
#   4 src/partitioned  front end: partitioned requests
#   5 src/tools        mpix_info (may include anything)
# Within an axis (src/gpu, providers) one implementation's folder (gpu/cuda, providers/ofi)
# includes no other implementation's, except the shared gpu/common. Public headers (mpix/...)
# may be included anywhere; a name without a folder (a generated .inc) is the file's own.
# Scans *.c, *.h, *.cpp, *.hpp, *.cu, *.def and *.inc tracked by git under src/ and providers/.
# Usage: scripts/check_layers.sh   (exit 1 and one line per upward include when any)
set -euo pipefail
cd "$(dirname "$0")/.."

where() {  # sets R (layer, empty if none), T (top folder), I (axis implementation or empty)
  local p=${1#src/}
  T=${p%%/*}
  case $T in
    base) R=0 ;; gpu) R=1 ;; core) R=2 ;; providers | api) R=3 ;; queue | partitioned) R=4 ;;
    tools) R=5 ;; *) R="" ;;
  esac
  I=""
  case $p in
    gpu/*/* | providers/*/*) local rest=${p#*/}; I="$T/${rest%%/*}" ;;
  esac
}

bad=0
checked=0
while IFS= read -r f; do
  where "$f"
  from_rank=$R from_top=$T from_impl=$I
  [ -n "$from_rank" ] || continue
  while IFS=: read -r line inc; do
    checked=$((checked + 1))
    case $inc in
      */*) ;;
      *) continue ;;  # the file's own folder, or a generated list
    esac
    case $inc in mpix/*) continue ;; esac
    where "$inc"
    to_rank=$R to_top=$T to_impl=$I
    if [ -z "$to_rank" ]; then
      echo "layers: $f:$line includes \"$inc\", which is in no layer"
      bad=1
      continue
    fi
    if [ "$to_top" = "$from_top" ]; then
      if [ -n "$to_impl" ] && [ "$to_impl" != "$from_impl" ] && [ "$to_impl" != gpu/common ]; then
        echo "layers: $f:$line includes \"$inc\": $from_impl${from_impl:+ }reaches into $to_impl"
        bad=1
      fi
      continue
    fi
    [ "$from_top" = tools ] && continue
    if [ "$to_rank" -ge "$from_rank" ]; then
      echo "layers: $f:$line includes \"$inc\" (layer $to_rank, $to_top) from layer $from_rank ($from_top)"
      bad=1
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
             sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*)".*/\1:\2/')
done < <(git ls-files 'src/*' 'providers/*' | grep -E '\.(c|h|cpp|hpp|cu|def|inc)$')
[ $bad -eq 0 ] && echo "layers: $checked includes checked, none runs up a layer"
exit $bad
