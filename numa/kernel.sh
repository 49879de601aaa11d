#!/bin/sh
# numa/kernel.sh DIR: prints the path of a Debian cloud kernel image,
# downloaded (apt-get download, never installed) and unpacked under DIR
# the first time. The package name changes with every ABI bump, so it is
# resolved through the metapackage linux-image-cloud-amd64 each time and a
# cached image of the same version is reused.
set -eu
dir=${1:?usage: numa/kernel.sh DIR}
mkdir -p "$dir"
pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-/ { print $2; exit }')
if [ -z "$pkg" ]; then
  # a machine whose package lists are empty: fetch them once
  apt-get update -qq >&2 || true
  pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-/ { print $2; exit }')
fi
if [ -z "$pkg" ]; then
  cached=$(ls "$dir"/vmlinuz-* 2>/dev/null | tail -n 1 || true)
  [ -n "$cached" ] || { echo "numa: cannot resolve linux-image-cloud-amd64 (apt-cache depends found no linux-image-*)" >&2; exit 1; }
  echo "numa: linux-image-cloud-amd64 does not resolve; using the cached $cached" >&2
  echo "$cached"; exit 0
fi
version=${pkg#linux-image-}
image=$dir/vmlinuz-$version
if [ ! -s "$image" ]; then
  tmp=$(mktemp -d "$dir/download.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  echo "numa: downloading $pkg (apt-get download)" >&2
  (cd "$tmp" && apt-get download -q "$pkg" >&2) || { echo "numa: apt-get download $pkg failed" >&2; exit 1; }
  dpkg-deb --fsys-tarfile "$tmp"/"$pkg"_*.deb | tar -xO "./boot/vmlinuz-$version" > "$tmp/vmlinuz"
  [ -s "$tmp/vmlinuz" ] || { echo "numa: $pkg has no ./boot/vmlinuz-$version" >&2; exit 1; }
  mv "$tmp/vmlinuz" "$image"
fi
echo "$image"
