package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/assent-hq/assent/evidence"
)

const evidenceUsage = `usage: assent evidence verify FILE [--keys KEYS]

Checks an evidence export offline: every timeline entry's hash against its
contents and the entry before it (naming the first that fails), the hash
over the entries, and the Ed25519 signature over the whole export. With
--keys (the JSON of /.well-known/assent/evidence-keys, saved), also that
the signing key is one the instance published.
`

// runEvidence runs `assent evidence …`.
func runEvidence(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) < 2 || args[0] != "verify" {
		fmt.Fprint(stderr, evidenceUsage)
		return errors.New("assent evidence: say verify and the file")
	}
	raw, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	checked, err := evidence.Verify(raw)
	if err != nil {
		return fmt.Errorf("%s does not verify: %w", args[1], err)
	}
	if len(args) == 4 && args[2] == "--keys" {
		if err := publishedKey(args[3], checked); err != nil {
			return err
		}
	} else if len(args) != 2 {
		fmt.Fprint(stderr, evidenceUsage)
		return errors.New("assent evidence verify: unexpected arguments")
	}
	fmt.Fprintf(stdout, "%s verifies: %d timeline entries, signed by %s\n", args[1], checked.Entries, checked.KeyID)
	return nil
}

// publishedKey checks that the key that signed is among those in the
// JWK set saved at file.
func publishedKey(file string, checked *evidence.Checked) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var set struct {
		Keys []struct{ Kid, X string }
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		return fmt.Errorf("%s is not the instance's evidence keys: %w", file, err)
	}
	for _, k := range set.Keys {
		if k.Kid == checked.KeyID && k.X == checked.PublicKey {
			return nil
		}
	}
	return fmt.Errorf("the export is signed by %s, which %s does not list with that public key", checked.KeyID, file)
}
