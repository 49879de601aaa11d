#!/bin/sh
# numa/initramfs.sh FTRUN OUT: a gzipped cpio for the guest: busybox-static
# with every applet linked, ftrun with scripts/, tests/ and numa/ under /p,
# Lua's cjson module, and every library ldd names for them (the loader too),
# at the same paths; numa/init becomes /init.
set -eu
ftrun=${1:?usage: numa/initramfs.sh FTRUN OUT}
out=${2:?usage: numa/initramfs.sh FTRUN OUT}
src=$(cd "$(dirname "$0")/.." && pwd)
busybox=$(command -v busybox) || { echo "numa: busybox-static is not installed" >&2; exit 1; }
cjson=$(ls /usr/lib/*/lua/5.4/cjson.so 2>/dev/null | head -n 1)
[ -n "$cjson" ] || { echo "numa: lua-cjson is not installed" >&2; exit 1; }
root=$(mktemp -d "${TMPDIR:-/tmp}/ftrun-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/bin "$root"/sbin "$root"/usr/bin "$root"/usr/sbin "$root"/proc "$root"/sys \
  "$root"/dev "$root"/tmp "$root"/p "$(dirname "$root$cjson")"
cp "$busybox" "$root"/bin/busybox
# Debian's list names busybox itself: a link to itself would make /init fail with ELOOP
for applet in $("$busybox" --list-full); do
  [ "${applet##*/}" = busybox ] && continue
  [ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
done
cp "$ftrun" "$root"/p/ftrun
cp -r "$src"/scripts "$src"/tests "$src"/numa "$root"/p/
cp "$cjson" "$root$cjson"
# every library of ftrun and cjson, dereferenced, at the path ldd gives
# (the loader's line has no "=>"; match it without \s, which mawk lacks)
ldd "$ftrun" "$cjson" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' | sort -u |
while read -r lib; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
cp "$src"/numa/init "$root"/init
mkdir -p "$(dirname "$out")"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
