package outbound

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/netguard"
)

func TestPostClassifiesEveryAnswer(t *testing.T) {
	var followed atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { followed.Add(1) }))
	defer target.Close()
	cases := []struct {
		status    int
		ok, retry bool
	}{
		{200, true, false}, {201, true, false}, {204, true, false},
		{400, false, false}, {401, false, false}, {403, false, false}, {404, false, false}, {410, false, false}, {422, false, false},
		{301, false, false}, {302, false, false}, {307, false, false}, {308, false, false},
		{408, false, true}, {429, false, true}, {500, false, true}, {502, false, true}, {503, false, true},
	}
	c := NewClient(netguard.DevLoopback)
	for _, tc := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
			assert.Equal(t, "evt", r.Header.Get("Assent-Event"))
			w.Header().Set("Location", target.URL)
			w.WriteHeader(tc.status)
		}))
		o := Post(context.Background(), c, srv.URL, []byte(`{}`), http.Header{"Assent-Event": {"evt"}})
		srv.Close()
		assert.Equal(t, tc.status, o.StatusCode)
		assert.Equal(t, tc.ok, o.Err == nil, "%d: %v", tc.status, o.Err)
		assert.Equal(t, tc.retry, o.Retryable, "%d", tc.status)
	}
	assert.Zero(t, followed.Load(), "redirects are not followed")
}

func TestPostTransportFailuresAreRetryable(t *testing.T) {
	c := NewClient(netguard.DevLoopback)
	c.Timeout = 200 * time.Millisecond
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(time.Second) }))
	defer slow.Close()
	o := Post(context.Background(), c, slow.URL, nil, nil)
	assert.True(t, o.Retryable)
	assert.ErrorContains(t, o.Err, "did not answer")
	assert.NotContains(t, o.Err.Error(), slow.URL, "addresses can be credentials; errors never carry them")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	o = Post(context.Background(), c, "http://"+addr+"/", nil, nil)
	assert.True(t, o.Retryable)
	assert.ErrorContains(t, o.Err, "could not reach")
}

// The dial-time check: every forbidden address is refused when connecting,
// whatever the URL said, including a name that resolves to loopback.
func TestPublicPolicyRefusesInsideAddressesAtDial(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a forbidden address was reached")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := NewClient(netguard.Public)
	for _, host := range []string{
		"127.0.0.1", "localhost", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "[::1]", "[::ffff:127.0.0.1]",
		"10.0.0.1", "172.16.0.1", "192.168.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "[fc00::1]", "[fe80::1]",
	} {
		for _, p := range []string{port, "443"} {
			o := Post(context.Background(), c, "https://"+host+":"+p+"/hook", nil, nil)
			assert.Error(t, o.Err, host)
			assert.Zero(t, o.StatusCode, host)
			if _, err := netip.ParseAddr(strings.Trim(host, "[]")); p == "443" && (err == nil || host == "localhost") {
				assert.ErrorContains(t, o.Err, "is a private or reserved address", host)
			}
		}
	}
}

func TestProxyFromTheEnvironmentIsIgnored(t *testing.T) {
	proxied := atomic.Int32{}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { proxied.Add(1) }))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	o := Post(context.Background(), NewClient(netguard.DevLoopback), srv.URL, nil, nil)
	assert.NoError(t, o.Err)
	assert.Zero(t, proxied.Load())
}
