#!/bin/sh
# numa/boot.sh KERNEL INITRD OUT MEMS: boots the guest under qemu (TCG) with
# one node per word of MEMS (MiB per node, comma-separated; 0: a node with a
# CPU and no memory), one CPU per node, and unpacks the files it sends back
# over the serial console into OUT, each checked against its sha256.
# Environment: TIMEOUT (s, default 300), FT_MIB, FT_REPS (placement.lua's
# knobs), APPEND (kernel parameters, default transparent_hugepage=madvise
# numa_balancing=disable). Exit 0 when the guest ran to its end and every
# file arrived whole; 1 otherwise, with the reason.
set -eu
kernel=${1:?usage: numa/boot.sh KERNEL INITRD OUT MEMS}
initrd=${2:?usage: numa/boot.sh KERNEL INITRD OUT MEMS}
out=${3:?usage: numa/boot.sh KERNEL INITRD OUT MEMS}
mems=${4:?usage: numa/boot.sh KERNEL INITRD OUT MEMS}
timeout=${TIMEOUT:-300}
append=${APPEND-transparent_hugepage=madvise numa_balancing=disable}
command -v qemu-system-x86_64 >/dev/null || { echo "numa: qemu-system-x86_64 is not installed" >&2; exit 1; }

rm -rf "$out" && mkdir -p "$out"
log=$out/serial.log
# sockets, not cores: two nodes' CPUs sharing one LLC make the kernel warn
nodes=0 total=0 numa=""
for mib in $(echo "$mems" | tr ',' ' '); do
  case $mib in *[!0-9]*|'') echo "numa: node size '$mib' in '$mems': expected MiB, 0 or more" >&2; exit 2;; esac
  if [ "$mib" -gt 0 ]; then
    numa="$numa -object memory-backend-ram,id=m$nodes,size=${mib}M -numa node,nodeid=$nodes,cpus=$nodes,memdev=m$nodes"
  else
    numa="$numa -numa node,nodeid=$nodes,cpus=$nodes"
  fi
  nodes=$((nodes + 1)) total=$((total + mib))
done
[ "$total" -gt 0 ] || { echo "numa: '$mems' gives the guest no memory" >&2; exit 2; }
cmdline="console=ttyS0 panic=-1 quiet $append FT_NODE_MEMS=$mems FT_MIB=${FT_MIB:-64} FT_REPS=${FT_REPS:-1}"
echo "$cmdline" > "$out/cmdline"
# -no-reboot with panic=-1: a guest panic ends qemu; timeout ends a hang
start=$(date +%s)
set +e
# shellcheck disable=SC2086 # $numa is a list of arguments
timeout -k 10 "$timeout" qemu-system-x86_64 -accel tcg -cpu max -m "${total}M" \
  -smp "$nodes,sockets=$nodes,cores=1,threads=1" $numa \
  -kernel "$kernel" -initrd "$initrd" -append "$cmdline" \
  -nographic -no-reboot -monitor none -serial stdio < /dev/null > "$log" 2>&1
rc=$?
set -e
end=$(date +%s)
echo "$((end - start))" > "$out/seconds"
tr -d '\r' < "$log" > "$log.txt"
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
  echo "numa: the guest ($mems) did not finish within $timeout s (TIMEOUT); last lines of $log:" >&2
  tail -n 5 "$log.txt" >&2; exit 1
fi
if grep -q 'Kernel panic' "$log.txt"; then
  echo "numa: the guest ($mems) panicked:" >&2
  grep -A3 'Kernel panic' "$log.txt" | head -n 4 >&2; exit 1
fi
if [ "$rc" != 0 ]; then
  echo "numa: qemu exited $rc ($mems):" >&2; tail -n 5 "$log.txt" >&2; exit 1
fi
grep -q 'guest: done' "$log.txt" || {
  echo "numa: the guest ($mems) stopped before its end; last lines of $log:" >&2; tail -n 5 "$log.txt" >&2; exit 1; }

# The frames: FTRUN-FILE-BEGIN name sha256 bytes, base64 lines, FTRUN-FILE-END name
awk -v dir="$out" '
  /FTRUN-FILE-BEGIN / { sub(/.*FTRUN-FILE-BEGIN /, ""); name = $1; sum[name] = $2; size[name] = $3
                        file = dir "/" name ".b64"; printf "" > file; inside = 1; next }
  /FTRUN-FILE-END / { close(file); inside = 0; print name, sum[name], size[name] > (dir "/frames"); next }
  inside && /^[A-Za-z0-9+\/=]+$/ { print >> file }
  inside && !/^[A-Za-z0-9+\/=]+$/ { print "numa: a line inside the frame of " name " is not base64: " $0 > "/dev/stderr" }
' "$log.txt"
[ -s "$out/frames" ] || { echo "numa: the guest ($mems) sent no file back" >&2; exit 1; }
bad=0
while read -r name sum size; do
  base64 -d < "$out/$name.b64" > "$out/$name" 2>/dev/null || true
  rm -f "$out/$name.b64"
  got=$(sha256sum < "$out/$name" | cut -d' ' -f1)
  if [ "$got" != "$sum" ] || [ "$(wc -c < "$out/$name")" != "$size" ]; then
    echo "numa: $name arrived damaged (sha256 or size differs from the guest's)" >&2; bad=1
  fi
done < "$out/frames"
echo "numa: $mems booted, ran and sent $(wc -l < "$out/frames") files back in $((end - start)) s" >&2
exit $bad
