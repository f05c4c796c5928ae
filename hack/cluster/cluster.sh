#!/usr/bin/env bash
# A real one-node Kubernetes cluster on this machine, without Docker, a
# registry or downloads: containerd, runc and the CNI plugins from Debian's
# packages; etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet and kube-proxy built from the Go module sources pinned in
# hack/envtest (the envtest API server's version); a pause image built here.
#
#   hack/cluster/cluster.sh up     start it (idempotent); writes .cluster/kubeconfig
#   hack/cluster/cluster.sh load TARBALL...   import image tarballs into the node
#   hack/cluster/cluster.sh down   stop it and undo every change it made
#
# Everything it keeps is under .cluster/ (CLUSTER_DIR). Nothing leaves the
# machine: the API server and the node listen on the node address only (the
# machine's own, NODE_IP), pods are network namespaces it makes, and a
# FORWARD rule drops anything from a pod that would be routed off the node.
# It must run as root: it starts containerd and a kubelet.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
state=${CLUSTER_DIR:-$root/.cluster}
bin=${CLUSTER_BIN:-$root/bin/k8s}
name=eval-node
pod_cidr=10.244.0.0/24
service_cidr=10.96.0.0/16
bridge=evalbr0
chain=EVAL-NODE-EGRESS
pause_image=localhost/eval-operator/pause:1
sock=$state/containerd/containerd.sock
# Every sysctl the components may change: restored on down.
sysctls=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
	kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward
	net.ipv4.conf.all.route_localnet net.bridge.bridge-nf-call-iptables
	net.bridge.bridge-nf-call-ip6tables net.netfilter.nf_conntrack_max
	net.netfilter.nf_conntrack_tcp_timeout_established
	net.netfilter.nf_conntrack_tcp_timeout_close_wait)
# Host paths the components create outside the state directory: removed on
# down when they did not exist before up.
host_dirs=(/var/lib/kubelet /var/lib/cni /run/containerd /etc/cni /opt/cni)

log() { printf '%s cluster: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "$*"; exit 1; }

node_ip() {
	if [[ -n ${NODE_IP:-} ]]; then echo "$NODE_IP"; return; fi
	# The source address of the default route: the machine's own. No packet
	# is sent to find it.
	ip -4 -o route get 192.0.2.255 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p'
}

# --- up -------------------------------------------------------------------

packages() {
	local missing=()
	command -v containerd >/dev/null || missing+=(containerd)
	command -v runc >/dev/null || missing+=(runc)
	[[ -x /usr/lib/cni/bridge ]] || missing+=(containernetworking-plugins)
	command -v iptables >/dev/null || missing+=(iptables)
	command -v nft >/dev/null || missing+=(nftables)
	command -v conntrack >/dev/null || missing+=(conntrack)
	command -v openssl >/dev/null || missing+=(openssl)
	[[ ${#missing[@]} -eq 0 ]] && return
	log "installing ${missing[*]} from Debian's packages"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

binaries() {
	"$root/hack/envtest/build.sh" "$bin" kube-apiserver etcd kubelet kube-controller-manager kube-scheduler kube-proxy
	local imgtool=$state/bin/image
	mkdir -p "$state/bin"
	go -C "$root/hack/image" build -o "$imgtool" .
	CGO_ENABLED=0 go -C "$root/hack/image" build -trimpath -ldflags "-s -w" -o "$state/bin/pause" ./pause
	"$imgtool" binary --ref="$pause_image" --binary="$state/bin/pause" --user=65535:65535 --platform="linux/$(go env GOARCH)" \
		--layout="$state/bin/pause-oci" --tarball="$state/bin/pause.tar"
}

# save records, once, what up is about to change, so down can restore it.
save() {
	[[ -f $state/saved/sysctl ]] && return
	mkdir -p "$state/saved"
	local k
	for k in "${sysctls[@]}"; do
		if v=$(sysctl -n "$k" 2>/dev/null); then printf '%s=%s\n' "$k" "$v"; fi
	done >"$state/saved/sysctl"
	for k in "${host_dirs[@]}"; do [[ -e $k ]] || echo "$k"; done >"$state/saved/absent"
	nft list tables >"$state/saved/nft-tables"
}

certs() {
	local pki=$state/pki ip=$1
	[[ -f $pki/admin.crt ]] && return
	mkdir -p "$pki"
	(
		cd "$pki"
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 \
			-subj /CN=eval-node-ca 2>/dev/null
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
		# leaf NAME SUBJECT [SAN]
		leaf() {
			openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
			printf 'extendedKeyUsage=serverAuth,clientAuth\n%s\n' "${3:+subjectAltName=$3}" >"$1.ext"
			openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 \
				-out "$1.crt" -extfile "$1.ext" 2>/dev/null
			rm "$1.csr" "$1.ext"
		}
		leaf apiserver /CN=kube-apiserver \
			"IP:$ip,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
		leaf admin "/O=system:masters/CN=eval-node-admin"
		leaf node "/O=system:nodes/CN=system:node:$name"
		leaf kubelet "/CN=$name" "IP:$ip,DNS:$name"
	)
}

kubeconfig() { # FILE CERT IP
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $name
  cluster: {server: "https://$3:6443", certificate-authority: $state/pki/ca.crt}
users:
- name: $2
  user: {client-certificate: $state/pki/$2.crt, client-key: $state/pki/$2.key}
contexts:
- name: $name
  context: {cluster: $name, user: $2}
current-context: $name
EOF
}

configs() {
	local ip=$1
	mkdir -p "$state/containerd" "$state/cni/net.d" "$state/cni/networks" "$state/kubelet" "$state/logs" "$state/pid"
	kubeconfig "$state/kubeconfig" admin "$ip"
	kubeconfig "$state/node.kubeconfig" node "$ip"
	cat >"$state/containerd/config.toml" <<EOF
version = 2
root = "$state/containerd/root"
state = "$state/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$state/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$state/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_image"
  disable_apparmor = true
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$state/cni/net.d"
EOF
	# No IP masquerade: pods talk to the node and to each other only.
	cat >"$state/cni/net.d/10-eval-node.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "eval-node", "plugins": [
  {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$state/cni/networks",
            "ranges": [[{"subnet": "$pod_cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "loopback"}]}
EOF
	cat >"$state/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
containerRuntimeEndpoint: unix://$sock
podLogsDir: $state/pod-logs
tlsCertFile: $state/pki/kubelet.crt
tlsPrivateKeyFile: $state/pki/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $state/pki/ca.crt}
authorization: {mode: Webhook}
# A shared disk: never evict or collect images for lack of it.
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
EOF
	cat >"$state/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clientConnection: {kubeconfig: $state/kubeconfig}
hostnameOverride: $name
clusterCIDR: $pod_cidr
bindAddress: $ip
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["$ip/32"]
# Leave the machine's conntrack settings alone.
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

running() { [[ -f $state/pid/$1 ]] && kill -0 "$(cat "$state/pid/$1")" 2>/dev/null; }

start() { # NAME COMMAND...
	local n=$1; shift
	running "$n" && return
	"$@" >>"$state/logs/$n.log" 2>&1 &
	echo $! >"$state/pid/$n"
}

wait_for() { # WHAT SECONDS COMMAND...
	local what=$1 secs=$2; shift 2
	local end=$((SECONDS + secs))
	until "$@" >/dev/null 2>&1; do
		[[ $SECONDS -lt $end ]] || die "$what not ready after ${secs}s; see $state/logs"
		sleep 0.5
	done
}

egress_guard() {
	iptables -w -N "$chain" 2>/dev/null || true
	iptables -w -C FORWARD -j "$chain" 2>/dev/null || iptables -w -I FORWARD -j "$chain"
	iptables -w -C "$chain" -s "$pod_cidr" ! -o "$bridge" -j DROP 2>/dev/null ||
		iptables -w -A "$chain" -s "$pod_cidr" ! -o "$bridge" -j DROP
}

up() {
	[[ $(id -u) == 0 ]] || die "must run as root (it starts containerd and a kubelet)"
	local t0=$SECONDS ip
	ip=$(node_ip)
	[[ -n $ip ]] || die "no node address: set NODE_IP to an address of this machine"
	packages
	binaries
	log "binaries ready ($((SECONDS - t0))s)"
	save
	certs "$ip"
	configs "$ip"
	egress_guard
	local k=$state/kubeconfig pki=$state/pki
	start containerd containerd --config "$state/containerd/config.toml"
	start etcd "$bin/etcd" --name eval-node --data-dir "$state/etcd" --unsafe-no-fsync \
		--listen-client-urls http://127.0.0.1:12379 --advertise-client-urls http://127.0.0.1:12379 \
		--listen-peer-urls http://127.0.0.1:12380 --initial-advertise-peer-urls http://127.0.0.1:12380 \
		--initial-cluster eval-node=http://127.0.0.1:12380
	start kube-apiserver "$bin/kube-apiserver" --etcd-servers http://127.0.0.1:12379 \
		--bind-address "$ip" --advertise-address "$ip" --secure-port 6443 \
		--tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
		--client-ca-file "$pki/ca.crt" --kubelet-client-certificate "$pki/admin.crt" \
		--kubelet-client-key "$pki/admin.key" --kubelet-certificate-authority "$pki/ca.crt" \
		--kubelet-preferred-address-types InternalIP,Hostname \
		--service-account-issuer https://kubernetes.default.svc --service-account-key-file "$pki/sa.pub" \
		--service-account-signing-key-file "$pki/sa.key" --service-cluster-ip-range "$service_cidr" \
		--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --profiling=false
	wait_for "containerd" 30 ctr -a "$sock" version
	wait_for "kube-apiserver" 60 kubectl --kubeconfig "$k" get --raw /readyz
	start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$k" \
		--authentication-kubeconfig "$k" --authorization-kubeconfig "$k" --bind-address 127.0.0.1 \
		--leader-elect=false --use-service-account-credentials --root-ca-file "$pki/ca.crt" \
		--service-account-private-key-file "$pki/sa.key" --cluster-signing-cert-file "$pki/ca.crt" \
		--cluster-signing-key-file "$pki/ca.key" --profiling=false
	start kube-scheduler "$bin/kube-scheduler" --kubeconfig "$k" --authentication-kubeconfig "$k" \
		--authorization-kubeconfig "$k" --bind-address 127.0.0.1 --leader-elect=false --profiling=false
	ctr -a "$sock" -n k8s.io images import "$state/bin/pause.tar" >/dev/null
	start kubelet "$bin/kubelet" --config "$state/kubelet/config.yaml" --kubeconfig "$state/node.kubeconfig" \
		--root-dir "$state/kubelet" --cert-dir "$state/kubelet/pki" --node-ip "$ip" --hostname-override "$name"
	start kube-proxy "$bin/kube-proxy" --config "$state/kube-proxy.yaml"
	wait_for "node $name" 90 kubectl --kubeconfig "$k" wait --for=condition=Ready "node/$name" --timeout=1s
	# The service account the namespaces get before any pod may start.
	wait_for "the default ServiceAccount" 60 kubectl --kubeconfig "$k" get serviceaccount default
	log "node $name Ready at $ip ($((SECONDS - t0))s); KUBECONFIG=$k"
}

load() {
	local f
	for f in "$@"; do
		ctr -a "$sock" -n k8s.io images import "$f" | sed 's/^/  /' >&2
	done
}

# --- down -----------------------------------------------------------------

stop_pid() { # NAME
	local f=$state/pid/$1 pid
	[[ -f $f ]] || return 0
	pid=$(cat "$f")
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

# shims are the containerd shims of this cluster's containerd, and the
# processes they run (the containers).
shims() { pgrep -f "containerd-shim-runc-v2 .*-address $sock( |$)" || true; }

down() {
	[[ -d $state ]] || { log "nothing to stop"; return; }
	local t0=$SECONDS pid
	# The node first, so nothing restarts the pods it is about to lose.
	stop_pid kubelet
	stop_pid kube-proxy
	for pid in $(shims); do
		pkill -9 -P "$pid" 2>/dev/null || true
		kill -9 "$pid" 2>/dev/null || true
	done
	stop_pid containerd
	for n in kube-scheduler kube-controller-manager kube-apiserver etcd; do stop_pid "$n"; done
	# Unmount everything under the state directory (pod volumes, container
	# root filesystems, network namespaces), deepest first.
	awk -v s="$state/" 'index($5, s) == 1 {print $5}' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null || true; done
	ip link del "$bridge" 2>/dev/null || true
	iptables -w -D FORWARD -j "$chain" 2>/dev/null || true
	iptables -w -F "$chain" 2>/dev/null || true
	iptables -w -X "$chain" 2>/dev/null || true
	clean_kube_chains
	# kube-proxy's tables, and those iptables (nft-backed) made for the
	# kubelet and the egress rule.
	nft list tables | grep -vxFf "$state/saved/nft-tables" | while read -r _ family table; do
		nft delete table "$family" "$table" 2>/dev/null || true
	done
	# The kubelet's pod cgroups, in every hierarchy, deepest first.
	find /sys/fs/cgroup -depth -type d -name 'kubepods*' -path '*/kubepods*' 2>/dev/null |
		while read -r d; do find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true; done
	restore
	rm -rf /run/containerd/s
	# Checked before the state goes, which keeps what down needs to retry.
	leftovers
	rm -rf "$state"
	log "stopped and cleaned ($((SECONDS - t0))s)"
}

# clean_kube_chains removes the KUBE-* iptables chains the kubelet and
# kube-proxy made, and the rules that jump to them.
clean_kube_chains() {
	local ipt t
	for ipt in iptables ip6tables; do
		for t in filter nat mangle; do
			"$ipt" -w -t "$t" -S 2>/dev/null | sed -n '/^-A [A-Z]* .*-j KUBE-/s/^-A/-D/p' |
				while read -r rule; do eval "$ipt -w -t $t $rule" 2>/dev/null || true; done
			"$ipt" -w -t "$t" -S 2>/dev/null | sed -n 's/^-N \(KUBE-[A-Z0-9-]*\)$/\1/p' |
				while read -r c; do "$ipt" -w -t "$t" -F "$c" 2>/dev/null || true; done
			"$ipt" -w -t "$t" -S 2>/dev/null | sed -n 's/^-N \(KUBE-[A-Z0-9-]*\)$/\1/p' |
				while read -r c; do "$ipt" -w -t "$t" -X "$c" 2>/dev/null || true; done
		done
	done
}

restore() {
	local f=$state/saved/sysctl
	[[ -f $f ]] || return 0
	while IFS='=' read -r k v; do
		[[ $(sysctl -n "$k" 2>/dev/null) == "$v" ]] || sysctl -qw "$k=$v" >/dev/null || log "cannot restore $k=$v"
	done <"$f"
	while read -r d; do rm -rf "$d"; done <"$state/saved/absent"
}

# leftovers fails when anything up made is still there.
leftovers() {
	local bad=() f=$state/saved/sysctl
	[[ -n $(shims) ]] && bad+=("containerd shims")
	pgrep -f "$bin/(kubelet|kube-proxy|kube-apiserver|etcd|kube-controller-manager|kube-scheduler)" >/dev/null &&
		bad+=("control-plane or node processes")
	ip link show "$bridge" >/dev/null 2>&1 && bad+=("bridge $bridge")
	ip -o link show type veth 2>/dev/null | grep -q "master $bridge" && bad+=("veths")
	iptables-save 2>/dev/null | grep -qE "KUBE-|$chain" && bad+=("iptables chains")
	nft list tables 2>/dev/null | grep -q kube-proxy && bad+=("nft tables")
	[[ -d /var/lib/kubelet || -d /run/containerd/s ]] && bad+=("kubelet or containerd directories")
	find /sys/fs/cgroup -type d -name 'kubepods*' 2>/dev/null | grep -q . && bad+=("kubepods cgroups")
	if [[ -f $f ]]; then
		while IFS='=' read -r k v; do
			[[ $(sysctl -n "$k" 2>/dev/null) == "$v" ]] || bad+=("sysctl $k")
		done <"$f"
	fi
	[[ ${#bad[@]} -eq 0 ]] || die "left behind: ${bad[*]}"
}

case ${1:-} in
up) up ;;
load) shift; load "$@" ;;
down) down ;;
*) echo "usage: $0 up|load TARBALL...|down" >&2; exit 2 ;;
esac
