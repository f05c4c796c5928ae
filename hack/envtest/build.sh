#!/usr/bin/env bash
# Builds kube-apiserver and etcd for envtest from the official Go module sources
# pinned in this module, into $1 (default bin/k8s). Used when setup-envtest
# cannot download release binaries (offline machines with only a module proxy).
# The binaries are cached: a second run with the same pins does nothing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../bin/k8s}
mkdir -p "$out"
out=$(cd "$out" && pwd)

k8s_version=$(go -C "$here" list -m -f '{{.Version}}' k8s.io/kubernetes)
etcd_version=$(go -C "$here" list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
stamp="$out/.built-$k8s_version-$etcd_version"
if [[ -x $out/kube-apiserver && -x $out/etcd && -f $stamp ]]; then
	exit 0
fi

# The server reports its version from these ldflags; without them it claims
# v0.0.0 and clients that gate on the server version misbehave.
major=${k8s_version#v}; minor=${major#*.}; major=${major%%.*}; minor=${minor%%.*}
vpkg=k8s.io/component-base/version
ldflags="-s -w -X $vpkg.gitVersion=$k8s_version -X $vpkg.gitMajor=$major -X $vpkg.gitMinor=$minor"
ldflags+=" -X $vpkg.gitTreeState=clean -X $vpkg.buildDate=1970-01-01T00:00:00Z"

echo "building kube-apiserver $k8s_version and etcd $etcd_version into $out (first time only, a few minutes)" >&2
export CGO_ENABLED=0
go -C "$here" build -trimpath -ldflags "$ldflags" -o "$out/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
go -C "$here" build -trimpath -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3
rm -f "$out"/.built-*
touch "$stamp"
