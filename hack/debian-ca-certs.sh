#!/usr/bin/env bash
# debian-ca-certs.sh <version> <sha256> <dest>: writes the CA bundle of
# Debian's ca-certificates package at <version> to <dest>, so that the image
# trusts a known, pinned set of CAs rather than whatever the build machine
# has in /etc/ssl. The package ships one PEM file per CA (the Mozilla set);
# the bundle is them all, in name order, as update-ca-certificates
# concatenates them. apt fetches the package, whose sha256 must be <sha256>.
# When Debian supersedes that version it leaves the mirrors: bump both in the
# Makefile (CA_CERTS_DEB_VERSION, CA_CERTS_DEB_SHA256).
set -euo pipefail
version=$1 sha256=$2 dest=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get download "ca-certificates=$version" >/dev/null 2>&1; then
	# A fresh machine may have no package lists yet; only root can fetch them.
	[[ $(id -u) == 0 ]] && apt-get update -qq >/dev/null 2>&1 || true
	apt-get download "ca-certificates=$version" >/dev/null || {
		echo "apt-get download ca-certificates=$version failed: bump CA_CERTS_DEB_VERSION and CA_CERTS_DEB_SHA256 (apt-cache policy ca-certificates), or pass CA_CERTS=<a PEM bundle>" >&2
		exit 1
	}
fi
deb=(ca-certificates_*.deb)
echo "$sha256  ${deb[0]}" | sha256sum --check --quiet - || {
	echo "${deb[0]} is not the package pinned by CA_CERTS_DEB_SHA256 ($sha256)" >&2
	exit 1
}
dpkg-deb -x "${deb[0]}" pkg
mkdir -p "$(dirname "$dest")"
LC_ALL=C find pkg/usr/share/ca-certificates/mozilla -name '*.crt' -print0 | LC_ALL=C sort -z | xargs -0 cat > "$dest.tmp"
mv "$dest.tmp" "$dest"
echo "$dest: $(grep -c 'BEGIN CERTIFICATE' "$dest") CA certificates from Debian ca-certificates $version"
