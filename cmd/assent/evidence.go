package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/evidence"
)

const evidenceUsage = `usage: assent evidence verify FILE (--url URL | --keys KEYS)

Checks an evidence export: every timeline entry's hash against its
contents and the entry before it (naming the first that fails), the hash
over the entries, and the Ed25519 signature over the whole export by a key
the instance publishes. The public key inside the file proves nothing by
itself (whoever edits an export can sign it again with a key of their
own), so say whose keys to trust:

  --url URL    the instance's address, such as https://assent.example.com:
               its keys are fetched from URL/.well-known/assent/evidence-keys
               (https, or http on this machine only)
  --keys KEYS  that JSON, saved earlier, to check offline

Without either, the entries are checked and the command refuses.
`

// keysFetchTimeout bounds fetching the instance's keys.
const keysFetchTimeout = 15 * time.Second

// runEvidence runs `assent evidence …`.
func runEvidence(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) < 1 || args[0] != "verify" {
		fmt.Fprint(stderr, evidenceUsage)
		return errors.New("assent evidence: say verify and the file")
	}
	fs := flag.NewFlagSet("assent evidence verify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	instance := fs.String("url", "", "")
	keysFile := fs.String("keys", "", "")
	// FILE may come before or after the flags.
	var files []string
	for rest := args[1:]; ; rest = fs.Args()[1:] {
		if err := fs.Parse(rest); err != nil {
			fmt.Fprint(stderr, evidenceUsage)
			return fmt.Errorf("assent evidence verify: %w", err)
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
	}
	if len(files) != 1 || (*instance != "" && *keysFile != "") {
		fmt.Fprint(stderr, evidenceUsage)
		return errors.New("assent evidence verify: give one file, and --url or --keys")
	}
	file := files[0]
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var keys evidence.Keys
	var source string
	switch {
	case *instance != "":
		keys, source, err = fetchEvidenceKeys(ctx, *instance)
	case *keysFile != "":
		keys, source, err = savedEvidenceKeys(*keysFile)
	}
	if err != nil {
		return err
	}
	checked, err := evidence.Verify(raw, keys)
	if errors.Is(err, evidence.ErrNoTrustedKeys) {
		fmt.Fprint(stderr, evidenceUsage)
		return fmt.Errorf("%s: its entries are consistent, but it is not verified: %w; give --url (the instance's address) or --keys (its saved keys)", file, err)
	}
	if err != nil {
		return fmt.Errorf("%s does not verify: %w", file, err)
	}
	fmt.Fprintf(stdout, "%s verifies: %d timeline entries, signed by %s, a key of %s\n", file, checked.Entries, checked.KeyID, source)
	return nil
}

// savedEvidenceKeys reads the instance's key set saved at file.
func savedEvidenceKeys(file string) (evidence.Keys, string, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, "", err
	}
	keys, err := evidence.ParseKeys(raw)
	if err != nil {
		return nil, "", fmt.Errorf("%s is not the instance's evidence keys: %w", file, err)
	}
	return keys, file, nil
}

// fetchEvidenceKeys fetches the instance's key set. This is the
// operator's own CLI calling the address they typed, so a plain client
// with a timeout, not the SSRF guard the server puts on its own outbound
// calls; the keys must come over TLS unless the instance is this machine,
// or whoever sits on the path could hand over keys of their own.
func fetchEvidenceKeys(ctx context.Context, instance string) (evidence.Keys, string, error) {
	base, err := url.Parse(strings.TrimRight(instance, "/"))
	if err != nil || base.Host == "" || (base.Scheme != "https" && base.Scheme != "http") {
		return nil, "", fmt.Errorf("--url must be the instance's address, such as https://assent.example.com; got %q", instance)
	}
	if err := trustedTransport(base); err != nil {
		return nil, "", err
	}
	at := base.JoinPath(api.EvidenceKeysPath).String()
	client := &http.Client{Timeout: keysFetchTimeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		return trustedTransport(req.URL)
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, at, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("fetch the instance's evidence keys: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, "", fmt.Errorf("fetch the instance's evidence keys: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("fetch the instance's evidence keys: %s answered %d", at, resp.StatusCode)
	}
	keys, err := evidence.ParseKeys(body)
	if err != nil {
		return nil, "", fmt.Errorf("%s is not an instance's evidence keys: %w", at, err)
	}
	return keys, at, nil
}

// trustedTransport refuses plain http but to this machine.
func trustedTransport(u *url.URL) error {
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); u.Scheme == "http" && (host == "localhost" || ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("the evidence keys must be fetched over https (http only on this machine): %s", u.Redacted())
}
