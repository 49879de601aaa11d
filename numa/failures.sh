#!/bin/sh
# numa/failures.sh KERNEL INITRD DIR: a guest that hangs and a guest that panics must each end
# numa/boot.sh within its timeout, non-zero, with a message that says which. TAP.
set -u
kernel=$1 initrd=$2 dir=$3
here=$(cd "$(dirname "$0")" && pwd)
n=0 failed=0
expect() { # expect NAME PATTERN COMMAND...: the command ends non-zero and says PATTERN
  name=$1 pattern=$2; shift 2
  n=$((n + 1))
  start=$(date +%s)
  msg=$("$@" 2>&1 >/dev/null); rc=$?
  took=$(($(date +%s) - start))
  if [ "$rc" != 0 ] && printf '%s\n' "$msg" | grep -q "$pattern"; then
    echo "ok $n - $name: exit $rc after $took s, says '$pattern'"
  else
    echo "not ok $n - $name: exit $rc after $took s"; printf '%s\n' "$msg" | sed 's/^/#   /'; failed=1
  fi
}
# the guest cannot even reach /init in 3 s under TCG: a hang as far as the host can tell
expect "a guest that hangs ends at TIMEOUT" "did not finish within 3 s" \
  env TIMEOUT=3 "$here/boot.sh" "$kernel" "$initrd" "$dir/hang" 1024,1024
# no /init to run: the kernel panics, and panic=-1 with -no-reboot ends qemu at once
expect "a guest that panics ends at once" "panicked" \
  env TIMEOUT=120 APPEND="rdinit=/nonexistent" "$here/boot.sh" "$kernel" "$initrd" "$dir/panic" 1024,1024
echo "1..$n"
exit $failed
