// Package netguard decides which addresses Assent may send requests to:
// public hosts on port 443 only, never private, loopback, link-local,
// CGNAT, metadata or unspecified addresses, unless the operator names
// networks of their own (Inside). The same Policy checks a receiver URL
// when it is saved and every connection when it is dialled.
package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// Policy is a set of address rules.
type Policy struct {
	guardian *ssrf.Guardian
	// inside are networks admitted at any port and over http as well:
	// receivers on the operator's own network.
	inside []netip.Prefix
}

// Public is the production policy: HTTPS to public addresses on port 443.
var Public = &Policy{guardian: ssrf.New(ssrf.WithPorts(443))}

// Loopback is this machine's networks.
var Loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// DevLoopback also admits receivers on this machine (http://127.0.0.1:any)
// for `assent dev` and tests.
var DevLoopback = Inside(Loopback)

// Inside is Public that also admits the networks given, at any port and
// over http: for receivers inside the operator's network (see
// ParseNetworks, which keeps the cloud metadata address out).
func Inside(networks []netip.Prefix) *Policy {
	return &Policy{guardian: Public.guardian, inside: networks}
}

// metadata are the cloud instance-metadata addresses: a network holding
// one would hand a receiver URL the machine's credentials.
var metadata = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254")}

// ParseNetworks reads a comma-separated list of CIDR prefixes
// ("10.20.0.0/16, 127.0.0.1/32"), refusing one that holds a cloud metadata
// address.
func ParseNetworks(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not a network in CIDR form (10.20.0.0/16, fd12::/64)", part)
		}
		for _, m := range metadata {
			if p.Contains(m) {
				return nil, fmt.Errorf("%s holds the cloud metadata address %s: name narrower networks", p, m)
			}
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// isInside reports whether a is in one of the operator's networks.
func (p *Policy) isInside(a netip.Addr) bool {
	a = a.Unmap()
	for _, n := range p.inside {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// Control is a net.Dialer Control function: it refuses a connection to a
// forbidden address after DNS resolution, so a name that rebinds to an
// inside address fails at connect time.
func (p *Policy) Control(network, address string, c syscall.RawConn) error {
	if ap, err := netip.ParseAddrPort(address); err == nil && p.isInside(ap.Addr()) {
		return nil
	}
	return p.guardian.Safe(network, address, c)
}

// CheckURL refuses a receiver address that breaks the policy. The host is
// resolved now, so a name that points inside is refused at once.
func (p *Policy) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("the URL must use https, not %s", u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("the URL must not carry credentials")
	}
	port := uint64(443)
	if u.Scheme == "http" {
		port = 80
	}
	if s := u.Port(); s != "" {
		// 16 bits, so 65979 is refused rather than wrapped to 443.
		if port, err = strconv.ParseUint(s, 10, 16); err != nil {
			return fmt.Errorf("the URL's port %q is not a port number (0 to 65535)", s)
		}
	}
	host := u.Hostname()
	addrs, err := resolve(ctx, host)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if p.isInside(a) {
			continue
		}
		// Outside the operator's networks only public HTTPS on 443 goes;
		// the address is named first, as the likeliest mistake.
		if err := p.guardian.SafeAddrPort(netip.AddrPortFrom(a.Unmap(), 443)); err != nil {
			if _, err := netip.ParseAddr(host); err == nil {
				return fmt.Errorf("%s is a private or reserved address", host)
			}
			return fmt.Errorf("%s resolves to %s, a private or reserved address", host, a.Unmap())
		}
		if u.Scheme != "https" {
			return fmt.Errorf("the URL must use https, not %s", u.Scheme)
		}
		if port != 443 {
			return fmt.Errorf("the URL must use port 443, not %d", port)
		}
	}
	return nil
}

func resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return nil, fmt.Errorf("%s does not resolve", host)
	}
	return addrs, nil
}
