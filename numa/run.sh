#!/bin/sh
# numa/run.sh FTRUN: `make numa`. Boots a qemu guest (TCG) for every NUMA
# layout asked for, runs placement.lua and tests/placement.lua in it, brings
# the results back and checks the placement claims on them (numa/check.lua).
# Exit 0 when every layout booted, ran and passed every check, 1 otherwise.
#   NODES, NODE_MEM   the main layout: NODES nodes (default 2) of NODE_MEM MiB (default 3072)
#   LAYOUTS           the layouts, MiB per node comma-separated, 0 = memoryless
#                     (default: the main one, 6144,0  6144,256  1536,1536,1536,1536)
#   NODE_MEMS         one layout only, e.g. 1024,0
#   MIB, REPS         placement.lua's buffer and repetitions in the guest (default 64, 1)
#   APPEND            kernel parameters (default transparent_hugepage=madvise numa_balancing=disable)
#   TIMEOUT           seconds a guest may take (default 300)
#   OUT               where each layout's files go (default build/numa/runs)
#   PUBLISH_DIR       copy the first layout's table, summary, JSON, provenance and plot there
#                     when every check passed (make numa-publish: results/numa)
#   FAILURES          0: skip the check that a hanging or panicking guest ends with a clear message
# tests/placement.lua maps 4 GiB in one call: a layout needs more than that in all, or that
# test fails under the kernel's overcommit heuristic.
set -eu
ftrun=${1:?usage: numa/run.sh FTRUN}
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$here/.." && pwd)/build/numa
out=${OUT:-$build/runs}
nodes=${NODES:-2} node_mem=${NODE_MEM:-3072}
case "$nodes$node_mem" in *[!0-9]*) echo "numa: NODES=$nodes NODE_MEM=$node_mem: expected whole numbers" >&2; exit 2;; esac
[ "$nodes" -ge 1 ] && [ "$nodes" -le 16 ] || { echo "numa: NODES=$nodes: expected 1 to 16" >&2; exit 2; }
main=$node_mem i=1
while [ "$i" -lt "$nodes" ]; do main="$main,$node_mem"; i=$((i + 1)); done
layouts=${NODE_MEMS:-${LAYOUTS:-$main 6144,0 6144,256 1536,1536,1536,1536}}

start=$(date +%s)
kernel=$("$here/kernel.sh" "$build")
"$here/initramfs.sh" "$ftrun" "$build/initrd.cpio.gz"
echo "numa: kernel $(basename "$kernel"), initramfs $(($(wc -c < "$build/initrd.cpio.gz") / 1024)) KiB, layouts: $layouts"
failed=""
for mems in $layouts; do
  dir=$out/$(echo "$mems" | tr ',' '_')
  echo "numa: booting $mems (MiB per node) under qemu -accel tcg"
  if FT_MIB=${MIB:-64} FT_REPS=${REPS:-1} "$here/boot.sh" "$kernel" "$build/initrd.cpio.gz" "$dir" "$mems" &&
     "$ftrun" "$here/check.lua" "$dir" "$mems" "$kernel"; then
    :
  else
    failed="$failed $mems"
  fi
done
if [ "${FAILURES:-1}" != 0 ]; then
  echo "numa: a guest that hangs or panics"
  "$here/failures.sh" "$kernel" "$build/initrd.cpio.gz" "$out" || failed="$failed failures"
fi
echo "numa: $(echo $layouts | wc -w) layout(s) in $(($(date +%s) - start)) s; results under $out"
if [ -n "$failed" ]; then
  echo "numa: FAILED:$failed" >&2
  exit 1
fi
echo "numa: every claim held"
if [ -n "${PUBLISH_DIR:-}" ]; then
  first=$out/$(echo "$layouts" | awk '{ print $1 }' | tr ',' '_')
  mkdir -p "$PUBLISH_DIR"
  for f in guest.md provenance.json exp-placement-summary.md exp-placement-results.json \
           exp-placement-plot.svg exp-placement-plot.dat exp-placement-plot.gp; do
    [ -f "$first/$f" ] && cp "$first/$f" "$PUBLISH_DIR/$f"
  done
  echo "numa: published $(basename "$first") in $PUBLISH_DIR"
fi
