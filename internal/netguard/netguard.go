// Package netguard decides which addresses Assent may send requests to:
// public hosts on port 443 only, never private, loopback, link-local,
// CGNAT, metadata or unspecified addresses. The same Policy checks a
// receiver URL when it is saved and every connection when it is dialled.
package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// Policy is a set of address rules.
type Policy struct {
	guardian *ssrf.Guardian
	// loopback admits http:// and any port on 127.0.0.0/8 and ::1.
	loopback bool
}

// Public is the production policy: HTTPS to public addresses on port 443.
var Public = &Policy{guardian: ssrf.New(ssrf.WithPorts(443))}

// DevLoopback also admits receivers on this machine (http://127.0.0.1:any)
// for `assent dev` and tests; serve and worker refuse to use it.
var DevLoopback = &Policy{loopback: true, guardian: ssrf.New(ssrf.WithAnyPort(),
	ssrf.WithAllowedV4Prefixes(netip.MustParsePrefix("127.0.0.0/8")),
	ssrf.WithAllowedV6Prefixes(netip.MustParsePrefix("::1/128")))}

// Control is a net.Dialer Control function: it refuses a connection to a
// forbidden address after DNS resolution, so a name that rebinds to an
// inside address fails at connect time.
func (p *Policy) Control(network, address string, c syscall.RawConn) error {
	return p.guardian.Safe(network, address, c)
}

// CheckURL refuses a receiver address that breaks the policy. The host is
// resolved now, so a name that points inside is refused at once.
func (p *Policy) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	if u.Scheme != "https" && !(p.loopback && u.Scheme == "http") {
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
		if err := p.guardian.SafeAddrPort(netip.AddrPortFrom(a.Unmap(), uint16(port))); err != nil {
			if port != 443 && !p.loopback {
				return fmt.Errorf("the URL must use port 443, not %d", port)
			}
			if _, err := netip.ParseAddr(host); err == nil {
				return fmt.Errorf("%s is a private or reserved address", host)
			}
			return fmt.Errorf("%s resolves to %s, a private or reserved address", host, a.Unmap())
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
