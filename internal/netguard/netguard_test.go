package netguard

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckURL(t *testing.T) {
	ok := []string{
		"https://93.184.216.34/hooks/assent",
		"https://93.184.216.34:443/x?y=1",
		"https://[2606:4700:4700::1111]/hook",
	}
	for _, u := range ok {
		assert.NoError(t, Public.CheckURL(context.Background(), u), u)
	}
	refused := map[string]string{
		"http://93.184.216.34/hook":       "https",
		"https://93.184.216.34:8443/hook": "port 443",
		// 65979 wraps to 443 in 16 bits; it must be refused, not wrapped.
		"https://1.1.1.1:65979/":          "not a port number",
		"https://user:pw@93.184.216.34/":  "credentials",
		"https://127.0.0.1/hook":          "is a private or reserved address",
		"https://localhost/hook":          "localhost resolves to 127.0.0.1, a private or reserved address",
		"https://10.1.2.3/hook":           "10.1.2.3 is a private or reserved address",
		"https://172.16.0.1/hook":         "is a private or reserved address",
		"https://192.168.1.1/hook":        "is a private or reserved address",
		"https://169.254.169.254/latest":  "is a private or reserved address",
		"https://100.64.0.1/hook":         "is a private or reserved address",
		"https://0.0.0.0/hook":            "is a private or reserved address",
		"https://[::1]/hook":              "is a private or reserved address",
		"https://[fd00::1]/hook":          "is a private or reserved address",
		"https://[::ffff:10.0.0.1]/hook":  "is a private or reserved address",
		"https://assent-nowhere.invalid/": "does not resolve",
		"/relative":                       "absolute",
		"https:///nohost":                 "absolute",
	}
	for u, want := range refused {
		err := Public.CheckURL(context.Background(), u)
		if assert.Error(t, err, u) {
			assert.Contains(t, err.Error(), want, u)
		}
	}
}

func TestDevLoopbackAdmitsThisMachineOnly(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{"http://127.0.0.1:8081/hook", "https://127.0.0.1:9443/", "http://[::1]:8080/", "http://localhost:3000/x"} {
		assert.NoError(t, DevLoopback.CheckURL(ctx, u), u)
		assert.Error(t, Public.CheckURL(ctx, u), u)
	}
	for _, u := range []string{"http://10.0.0.1:8080/", "http://169.254.169.254/", "ftp://127.0.0.1/"} {
		assert.Error(t, DevLoopback.CheckURL(ctx, u), u)
	}
}

func TestInsideAdmitsTheOperatorsNetworksOnly(t *testing.T) {
	ctx := context.Background()
	nets, err := ParseNetworks(" 10.20.0.0/16, fd12::/64 ,")
	require.NoError(t, err)
	p := Inside(nets)
	for _, u := range []string{"http://10.20.3.4:8080/hook", "https://10.20.0.1:9443/", "http://[fd12::5]:81/", "https://93.184.216.34/hook"} {
		assert.NoError(t, p.CheckURL(ctx, u), u)
	}
	for u, want := range map[string]string{
		"http://10.21.0.1:8080/":          "10.21.0.1 is a private or reserved address",
		"https://10.21.0.1/":              "is a private or reserved address",
		"http://93.184.216.34/hook":       "https",
		"https://93.184.216.34:8443/hook": "port 443",
		"http://127.0.0.1:8080/":          "is a private or reserved address",
		"http://169.254.169.254/":         "is a private or reserved address",
	} {
		err := p.CheckURL(ctx, u)
		if assert.Error(t, err, u) {
			assert.Contains(t, err.Error(), want, u)
		}
	}

	// Dialling holds to the same rule after DNS: inside at any port,
	// outside only public 443.
	assert.NoError(t, p.Control("tcp4", "10.20.9.9:8080", nil))
	assert.Error(t, p.Control("tcp4", "10.21.9.9:443", nil))
	assert.Error(t, p.Control("tcp4", "127.0.0.1:8080", nil))

	for s, want := range map[string]string{
		"10.0.0.0":       "not a network in CIDR form",
		"169.254.0.0/16": "holds the cloud metadata address 169.254.169.254",
		"0.0.0.0/0":      "holds the cloud metadata address",
		"fd00::/8":       "holds the cloud metadata address fd00:ec2::254",
	} {
		_, err := ParseNetworks(s)
		if assert.Error(t, err, s) {
			assert.Contains(t, err.Error(), want, s)
		}
	}
}
