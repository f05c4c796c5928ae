#!/usr/bin/env bash
# Builds Argo Rollouts' controller from the official module source pinned in
# this module into $1 (default bin/argo-rollouts), with its CRDs beside it
# (crds/), for the real-node canary test (make test-cluster). Cached: a
# second run with the same pin does nothing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../bin/argo-rollouts}
mkdir -p "$out"
out=$(cd "$out" && pwd)

mod=github.com/argoproj/argo-rollouts
version=$(go -C "$here" list -m -f '{{.Version}}' "$mod")
stamp="$out/.built-$version"
[[ -x $out/rollouts-controller && -f $stamp ]] && exit 0
echo "building Argo Rollouts $version into $out (first time only)" >&2
CGO_ENABLED=0 go -C "$here" build -trimpath -ldflags "-s -w" -o "$out/rollouts-controller" "$mod/cmd/rollouts-controller"
src=$(go -C "$here" list -m -f '{{.Dir}}' "$mod")
rm -rf "$out/crds"
mkdir -p "$out/crds"
cp "$src"/manifests/crds/*-crd.yaml "$out/crds/"
chmod -R u+w "$out/crds"
rm -f "$out"/.built-*
touch "$stamp"
