#!/usr/bin/env bash
# debian-promtool.sh <dest>: installs promtool from Debian's prometheus
# package into <dest> without installing the package (no daemon, no service).
# Fails, for the Makefile to build promtool from source instead, when apt
# cannot fetch the package.
set -euo pipefail
dest=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get download prometheus >/dev/null 2>&1; then
	# A fresh machine may have no package lists yet; only root can fetch them.
	[[ $(id -u) == 0 ]] && apt-get update -qq >/dev/null 2>&1 || exit 1
	apt-get download prometheus >/dev/null 2>&1 || exit 1
fi
dpkg-deb -x prometheus_*.deb pkg
install -m 0755 pkg/usr/bin/promtool "$dest"
