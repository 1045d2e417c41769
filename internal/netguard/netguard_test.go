package netguard

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
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
