#!/usr/bin/env bash
# Builds the kube-apiserver and etcd of the oldest Kubernetes version the CRDs
# support, pinned in this module (k8s.io/kubernetes and the etcd it was
# released with), from the official module sources into $1 (default
# bin/k8s-<version>), for make test-oldest. The binaries are cached: a second
# run with the same pins does nothing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
k8s_version=$(go -C "$here" list -m -f '{{.Version}}' k8s.io/kubernetes)
etcd_version=$(go -C "$here" list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
out=${1:-$here/../../bin/k8s-${k8s_version#v}}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stamp="$out/.built-$k8s_version-$etcd_version"
if [[ -x $out/kube-apiserver && -x $out/etcd && -f $stamp ]]; then
	exit 0
fi

# The server reports its version from these ldflags (the CEL suite reads it);
# without them it claims v0.0.0.
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
