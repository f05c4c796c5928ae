#!/usr/bin/env bash
# Builds Kubernetes components from the official Go module sources pinned in
# this module (or in the module directory MODULE, e.g. hack/envtest-oldest,
# which pins the oldest supported version), into $1 (default bin/k8s):
# kube-apiserver and etcd for envtest (used when setup-envtest cannot
# download release binaries: offline machines with only a module proxy), or
# the components named after $1, e.g. the real-node cluster's kubelet,
# kube-controller-manager, kube-scheduler and kube-proxy (hack/cluster). Each
# binary is cached: a second run with the same pins does nothing.
set -euo pipefail

here=$(cd "${MODULE:-$(dirname "$0")}" && pwd)
out=${1:-$here/../../bin/k8s}
shift || true
components=("$@")
[[ ${#components[@]} -gt 0 ]] || components=(kube-apiserver etcd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

k8s_version=$(go -C "$here" list -m -f '{{.Version}}' k8s.io/kubernetes)
etcd_version=$(go -C "$here" list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)

# The servers report their version from these ldflags; without them they
# claim v0.0.0 and clients that gate on the server version misbehave.
major=${k8s_version#v}; minor=${major#*.}; major=${major%%.*}; minor=${minor%%.*}
vpkg=k8s.io/component-base/version
ldflags="-s -w -X $vpkg.gitVersion=$k8s_version -X $vpkg.gitMajor=$major -X $vpkg.gitMinor=$minor"
ldflags+=" -X $vpkg.gitTreeState=clean -X $vpkg.buildDate=1970-01-01T00:00:00Z"

export CGO_ENABLED=0
for c in "${components[@]}"; do
	if [[ $c == etcd ]]; then
		version=$etcd_version pkg=go.etcd.io/etcd/server/v3 flags="-s -w"
	else
		version=$k8s_version pkg=k8s.io/kubernetes/cmd/$c flags=$ldflags
	fi
	stamp="$out/.built-$c-$version"
	[[ -x $out/$c && -f $stamp ]] && continue
	echo "building $c $version into $out (first time only)" >&2
	go -C "$here" build -trimpath -ldflags "$flags" -o "$out/$c" "$pkg"
	rm -f "$out/.built-$c-"*
	touch "$stamp"
done
