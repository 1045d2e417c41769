package admin

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
)

// originHost is a host a report may reach: a DNS name, optionally every
// subdomain of one (*.example.com). Only these characters reach the
// report hosts' Content-Security-Policy, so no entry can add a directive.
var originHost = regexp.MustCompile(`^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// reportOrigins checks and normalises the origins an organisation's
// reports may reach: https://host[:port] (http only for this machine,
// as in development), nothing more.
func reportOrigins(in []string) (models.StringList, error) {
	out := models.StringList{}
	for i, raw := range in {
		field := fmt.Sprintf("reportOrigins[%d]", i)
		o, err := reportOrigin(strings.ToLower(strings.TrimSpace(raw)))
		if err != nil {
			return nil, apperr.Field(apperr.InvalidRequest, field, "%q is not an origin a report may reach: %s", raw, err)
		}
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out, nil
}

func reportOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("give it as https://host or https://host:port")
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#") {
		return "", fmt.Errorf("an origin has no path, query or credentials")
	}
	host, port := u.Hostname(), u.Port()
	loopback := host == "localhost" || (net.ParseIP(host) != nil && net.ParseIP(host).IsLoopback())
	switch {
	case u.Scheme == "http" && !loopback:
		return "", fmt.Errorf("only https, but for this machine")
	case u.Scheme != "https" && u.Scheme != "http":
		return "", fmt.Errorf("only https")
	case !loopback && !originHost.MatchString(host):
		return "", fmt.Errorf("the host must be a DNS name, optionally *.name for its subdomains")
	case port != "" && strings.TrimLeft(port, "0123456789") != "":
		return "", fmt.Errorf("the port must be a number")
	}
	return u.Scheme + "://" + u.Host, nil
}
