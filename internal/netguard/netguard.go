// Package netguard decides which addresses Assent may send requests to:
// public hosts on port 443 only, never private, loopback, link-local,
// CGNAT, metadata or unspecified addresses.
package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"time"

	"code.dny.dev/ssrf"
)

// guardian holds the address rules; the outbound client's dialer uses the
// same one at connect time.
var guardian = ssrf.New(ssrf.WithPorts(443))

// Guardian returns the rules as an ssrf.Guardian, for a dialer's Control.
func Guardian() *ssrf.Guardian { return guardian }

// CheckURL refuses a receiver address that is not HTTPS on a public host.
// The host is resolved now, so a name that points inside is refused at
// once; the dialer checks again at each connection, so rebinding fails.
func CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	if u.Scheme != "https" {
		return fmt.Errorf("the URL must use https, not %s", u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("the URL must not carry credentials")
	}
	if p := u.Port(); p != "" && p != "443" {
		return fmt.Errorf("the URL must use port 443, not %s", p)
	}
	host := u.Hostname()
	addrs, err := resolve(ctx, host)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if err := guardian.SafeAddr(a.Unmap()); err != nil {
			return fmt.Errorf("%s resolves to %s, which is not a public address", host, a)
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
