/*
Copyright 2026 The eval-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// ErrPrivateAddress is the error of a connection refused because it would
// reach an address inside the cluster's network.
var ErrPrivateAddress = errors.New("refusing to connect to a loopback, link-local, unspecified or private address")

// TransportOptions configure the HTTP transport of one service.
type TransportOptions struct {
	// CABundle is a PEM bundle of the CAs that sign the service's
	// certificate; empty uses the system's roots.
	CABundle string
	// RefusePrivate refuses connections to loopback, link-local (cloud
	// metadata endpoints), unspecified, private and other special-purpose
	// addresses. It is checked on the address actually dialled, after DNS,
	// so a name that resolves into the cluster's network does not get
	// around it; a numeric host Go would resolve as a name (0x7f000001) is
	// refused without a lookup. The environment's proxy (HTTPS_PROXY,
	// HTTP_PROXY, NO_PROXY) is used: the administrator's proxy is dialled
	// unchecked, and what is dialled directly is checked.
	RefusePrivate bool
}

// NewTransport returns the HTTP transport of one service.
func NewTransport(opts TransportOptions) (*http.Transport, error) {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = dialer.DialContext
	if opts.RefusePrivate {
		checked := *dialer
		checked.Control = refusePrivate
		env := httpproxy.FromEnvironment()
		proxies, proxyFor := proxyAddresses(env), env.ProxyFunc()
		t.Proxy = func(r *http.Request) (*url.URL, error) {
			// Called for every request, proxied or not: a literal address
			// the proxy would reach for us is refused here.
			if err := refuseHost(r.URL.Hostname()); err != nil {
				return nil, err
			}
			return proxyFor(r.URL)
		}
		t.DialContext = func(ctx context.Context, network, address string) (net.Conn, error) {
			if slices.Contains(proxies, address) {
				return dialer.DialContext(ctx, network, address)
			}
			return checked.DialContext(ctx, network, address)
		}
	}
	if opts.CABundle != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(opts.CABundle)) {
			return nil, errors.New("caBundle holds no PEM certificate")
		}
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return t, nil
}

// proxyAddresses are the host:port the transport dials for the proxies cfg names.
func proxyAddresses(cfg *httpproxy.Config) []string {
	var addrs []string
	for _, raw := range []string{cfg.HTTPSProxy, cfg.HTTPProxy} {
		u, err := url.Parse(raw)
		if raw == "" || err != nil || u.Host == "" {
			continue
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "socks5": "1080"}[u.Scheme]
			if port == "" {
				port = "80"
			}
		}
		addrs = append(addrs, net.JoinHostPort(u.Hostname(), port))
	}
	return addrs
}

// refuseHost refuses a URL's host that is a private address literal, or a
// numeric form that is no address to netip but one to a resolver or proxy.
func refuseHost(host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if Private(ip) {
			return fmt.Errorf("%w: %s", ErrPrivateAddress, ip)
		}
		return nil
	}
	if numericName(host) {
		return fmt.Errorf("%w: %s is a numeric address in a form that is not a plain IP address", ErrPrivateAddress, host)
	}
	return nil
}

// numericName reports whether host's last label is a number (decimal,
// octal or 0x hexadecimal): no top-level domain is, and resolvers read
// such names as IPv4 addresses (127.1, 2130706433, 0x7f000001).
func numericName(host string) bool {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	last := strings.ToLower(labels[len(labels)-1])
	if hex, ok := strings.CutPrefix(last, "0x"); ok {
		last = hex
		return strings.Trim(last, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// refusePrivate is a net.Dialer Control that refuses private addresses.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrPrivateAddress, address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrPrivateAddress, address)
	}
	if Private(ip) {
		return fmt.Errorf("%w: %s", ErrPrivateAddress, ip)
	}
	return nil
}

// Private reports whether ip is inside a network a tenant's service must
// not reach: loopback, link-local, unspecified, private, multicast, or
// another special-purpose range; an IPv6 address that carries an IPv4
// one (NAT64, 6to4, Teredo, IPv4-compatible) is private when that is.
func Private(ip netip.Addr) bool {
	ip = ip.Unmap()
	if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() ||
		ip.IsPrivate() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range specialPurpose {
		if p.Contains(ip) {
			return true
		}
	}
	for _, v4 := range embeddedIPv4(ip) {
		if Private(v4) {
			return true
		}
	}
	return false
}

// specialPurpose are ranges beyond the standard library's predicates that
// lead into a cluster's or a provider's own network.
var specialPurpose = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // carrier-grade NAT (RFC 6598), used inside clusters and clouds
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and the limited broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64 (RFC 8215): the translator's own network
	netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
	netip.MustParsePrefix("2001:10::/28"),   // deprecated ORCHID
	netip.MustParsePrefix("100::/64"),       // discard-only
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	teredo    = netip.MustParsePrefix("2001::/32")
	v4compat  = netip.MustParsePrefix("::/96")
)

// embeddedIPv4 returns the IPv4 addresses an IPv6 address leads to: the
// last 32 bits of a NAT64 or IPv4-compatible address, bits 16 to 47 of a
// 6to4 one, and a Teredo address's server and (inverted) client.
func embeddedIPv4(ip netip.Addr) []netip.Addr {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	v4 := func(i int) netip.Addr { return netip.AddrFrom4([4]byte(b[i : i+4])) }
	switch {
	case nat64.Contains(ip), v4compat.Contains(ip):
		return []netip.Addr{v4(12)}
	case sixToFour.Contains(ip):
		return []netip.Addr{v4(2)}
	case teredo.Contains(ip):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []netip.Addr{v4(4), netip.AddrFrom4(client)}
	}
	return nil
}
