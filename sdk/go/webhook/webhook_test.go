package webhook

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type vector struct {
	Name       string   `json:"name"`
	Secret     string   `json:"secret"`
	Timestamp  int64    `json:"timestamp"`
	Body       string   `json:"body"`
	Header     string   `json:"header"`
	SignedWith []string `json:"signedWith"`
	VerifyAt   int64    `json:"verifyAt"`
	Valid      bool     `json:"valid"`
	Error      string   `json:"error"`
}

// sentinels maps the vectors' short error names to Verify's errors.
var sentinels = map[string]error{
	"malformed_header":           ErrMalformedHeader,
	"timestamp_out_of_tolerance": ErrTimestampOutOfTolerance,
	"no_matching_signature":      ErrNoMatchingSignature,
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	raw, err := os.ReadFile("testdata/signature_vectors.json")
	require.NoError(t, err)
	var vs []vector
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields() // a typo in the file must not silently skip a check
	require.NoError(t, dec.Decode(&vs))
	require.NotEmpty(t, vs)
	return vs
}

func TestSignatureVectors(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			require.False(t, seen[v.Name], "duplicate vector name")
			seen[v.Name] = true
			require.Equal(t, v.Valid, v.Error == "", "a vector is valid exactly when it names no error")

			err := Verify(v.Header, []byte(v.Body), v.Secret, time.Unix(v.VerifyAt, 0), DefaultTolerance)
			if v.Valid {
				assert.NoError(t, err)
			} else {
				want, ok := sentinels[v.Error]
				require.True(t, ok, "unknown error name %q", v.Error)
				assert.ErrorIs(t, err, want)
			}

			if len(v.SignedWith) > 0 {
				assert.Equal(t, v.Header, SignatureHeader(time.Unix(v.Timestamp, 0), []byte(v.Body), v.SignedWith...))
			}
		})
	}
}

func TestSignKnownValue(t *testing.T) {
	// Checked with: printf '%s' '1700000000.{}' | openssl dgst -sha256 -hmac secret
	got := Sign("secret", time.Unix(1700000000, 0), []byte(`{}`))
	assert.Equal(t, "b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163", got)
}

func TestSignIgnoresSubSecondsAndZone(t *testing.T) {
	base := time.Unix(1767225600, 0)
	later := base.Add(999 * time.Millisecond).In(time.FixedZone("x", 5*3600))
	assert.Equal(t, Sign("s", base, []byte("b")), Sign("s", later, []byte("b")))
	assert.Equal(t, SignatureHeader(base, []byte("b"), "s"), SignatureHeader(later, []byte("b"), "s"))
}

func TestSignatureHeaderRotation(t *testing.T) {
	now := time.Unix(1767225600, 0)
	body := []byte(`{"event":"report.viewed"}`)
	h := SignatureHeader(now, body, "old", "new")
	assert.Equal(t, "t=1767225600,v1="+Sign("old", now, body)+",v1="+Sign("new", now, body), h)
	// A receiver holding either secret accepts; any other does not.
	assert.NoError(t, Verify(h, body, "old", now, 0))
	assert.NoError(t, Verify(h, body, "new", now, 0))
	assert.ErrorIs(t, Verify(h, body, "other", now, 0), ErrNoMatchingSignature)
}

func TestVerifyEdgeCases(t *testing.T) {
	now := time.Unix(1767225600, 0)
	body := []byte(`{"event":"gate.denied","data":{}}`)
	sig := Sign("s", now, body)
	ts := strconv.FormatInt(now.Unix(), 10)

	cases := []struct {
		name      string
		header    string
		secret    string
		now       time.Time
		tolerance time.Duration
		want      error
	}{
		{"valid", "t=" + ts + ",v1=" + sig, "s", now, 0, nil},
		{"v1 before t", "v1=" + sig + ",t=" + ts, "s", now, 0, nil},
		{"uppercase hex accepted", "t=" + ts + ",v1=" + strings.ToUpper(sig), "s", now, 0, nil},
		{"future scheme ignored", "t=" + ts + ",v2=whatever,v1=" + sig, "s", now, 0, nil},
		{"sub-second clock does not matter", "t=" + ts + ",v1=" + sig, "s", now.Add(300*time.Second + 999*time.Millisecond), 0, nil},
		{"custom tolerance accepts", "t=" + ts + ",v1=" + sig, "s", now.Add(10 * time.Minute), 10 * time.Minute, nil},
		{"custom tolerance refuses", "t=" + ts + ",v1=" + sig, "s", now.Add(61 * time.Second), time.Minute, ErrTimestampOutOfTolerance},
		{"zero tolerance means default", "t=" + ts + ",v1=" + sig, "s", now.Add(301 * time.Second), 0, ErrTimestampOutOfTolerance},
		{"empty secret refused", "t=" + ts + ",v1=" + Sign("", now, body), "", now, 0, ErrEmptySecret},
		{"negative t", "t=-" + ts + ",v1=" + sig, "s", now, 0, ErrMalformedHeader},
		{"plus sign in t", "t=+" + ts + ",v1=" + sig, "s", now, 0, ErrMalformedHeader},
		{"spaces", "t=" + ts + ", v1=" + sig, "s", now, 0, ErrMalformedHeader},
		{"t overflows int64", "t=99999999999999999999,v1=" + sig, "s", now, 0, ErrMalformedHeader},
		{"huge t is out of tolerance, not wrapped", "t=9223372036854775807,v1=" + sig, "s", now, 0, ErrTimestampOutOfTolerance},
		{"t zero", "t=0,v1=" + sig, "s", now, 0, ErrTimestampOutOfTolerance},
		{"short v1", "t=" + ts + ",v1=" + sig[:62], "s", now, 0, ErrMalformedHeader},
		{"empty v1", "t=" + ts + ",v1=", "s", now, 0, ErrMalformedHeader},
		{"empty t", "t=,v1=" + sig, "s", now, 0, ErrMalformedHeader},
		{"trailing comma", "t=" + ts + ",v1=" + sig + ",", "s", now, 0, ErrMalformedHeader},
		{"item without =", "t=" + ts + ",v1=" + sig + ",x", "s", now, 0, ErrMalformedHeader},
		{"only unknown schemes", "t=" + ts + ",v0=" + sig, "s", now, 0, ErrMalformedHeader},
		{"signature for another t", "t=" + strconv.FormatInt(now.Unix()+1, 10) + ",v1=" + sig, "s", now, 0, ErrNoMatchingSignature},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Verify(c.header, body, c.secret, c.now, c.tolerance)
			if c.want == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, c.want)
			}
		})
	}
}

func TestVerifyRawBodyOnly(t *testing.T) {
	// The reason receivers must keep the raw body: re-encoding changes bytes.
	now := time.Unix(1767225600, 0)
	raw := []byte("{\"b\": 1, \"a\": \"\u00e9\"}")
	h := SignatureHeader(now, raw, "s")
	var v map[string]any
	require.NoError(t, json.Unmarshal(raw, &v))
	reencoded, err := json.Marshal(v)
	require.NoError(t, err)
	assert.NoError(t, Verify(h, raw, "s", now, 0))
	assert.ErrorIs(t, Verify(h, reencoded, "s", now, 0), ErrNoMatchingSignature)
}

func TestSentinelsDistinct(t *testing.T) {
	errs := []error{ErrMalformedHeader, ErrTimestampOutOfTolerance, ErrNoMatchingSignature, ErrEmptySecret}
	for i, a := range errs {
		for j, b := range errs {
			assert.Equal(t, i == j, errors.Is(a, b), "%v vs %v", a, b)
		}
	}
}

// FuzzVerify checks that Verify never panics, only ever returns one of its
// sentinels, and never accepts a header without a correct v1; and that
// whatever SignatureHeader produces, Verify accepts.
func FuzzVerify(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add(v.Header, []byte(v.Body), v.Secret, v.VerifyAt)
	}
	f.Add("t=1,v1=", []byte{}, "s", int64(1))
	f.Add(",,,=,=", []byte("x"), "s", int64(0))
	f.Add("t=9223372036854775807,v1=00", []byte("x"), "s", int64(-9223372036854775808))
	f.Add("t=0,t=0", []byte(nil), "", int64(0))

	known := []error{ErrMalformedHeader, ErrTimestampOutOfTolerance, ErrNoMatchingSignature, ErrEmptySecret}
	f.Fuzz(func(t *testing.T, header string, body []byte, secret string, now int64) {
		at := time.Unix(now, 0)
		err := Verify(header, body, secret, at, DefaultTolerance)
		if err != nil {
			found := false
			for _, k := range known {
				found = found || errors.Is(err, k)
			}
			if !found {
				t.Fatalf("unexpected error %v", err)
			}
		} else {
			ts, sigs, perr := parseHeader(header)
			if perr != nil {
				t.Fatalf("accepted a header that does not parse: %q", header)
			}
			want := Sign(secret, time.Unix(ts, 0), body)
			match := false
			for _, s := range sigs {
				match = match || hex.EncodeToString(s) == want
			}
			if !match {
				t.Fatalf("accepted %q without a matching v1", header)
			}
		}

		// The signer's own output always verifies (for real, post-1970 times:
		// t has no sign, by design).
		if secret != "" && now >= 0 {
			if err := Verify(SignatureHeader(at, body, secret), body, secret, at, DefaultTolerance); err != nil {
				t.Fatalf("own signature refused: %v", err)
			}
		}
	})
}
