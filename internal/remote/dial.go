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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
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
	// metadata endpoints), unspecified and private addresses. It is checked
	// on the address actually dialled, after DNS, so a name that resolves
	// into the cluster's network does not get around it.
	RefusePrivate bool
}

// NewTransport returns the HTTP transport of one service.
func NewTransport(opts TransportOptions) (*http.Transport, error) {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	t := http.DefaultTransport.(*http.Transport).Clone()
	if opts.RefusePrivate {
		dialer.Control = refusePrivate
		// Through a proxy, the dialled address would be the proxy's.
		t.Proxy = nil
	}
	t.DialContext = dialer.DialContext
	if opts.CABundle != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(opts.CABundle)) {
			return nil, errors.New("caBundle holds no PEM certificate")
		}
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return t, nil
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
// not reach: loopback, link-local, unspecified, private or multicast.
func Private(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() ||
		ip.IsPrivate() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() ||
		cgNAT.Contains(ip)
}

// cgNAT is the shared address space of RFC 6598, used inside clusters and clouds.
var cgNAT = netip.MustParsePrefix("100.64.0.0/10")
