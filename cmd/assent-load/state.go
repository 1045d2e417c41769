package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// state is what outlives one run, in --dir/load.json: who the load acts
// as, how far the fill got, and the measures taken.
type state struct {
	Org          string   `json:"org"`
	AdminKey     string   `json:"adminKey"`
	AgentKey     string   `json:"agentKey"`
	People       []string `json:"people"`
	HotEmail     string   `json:"hotEmail"`
	HotToken     string   `json:"hotToken"`
	Webhook      string   `json:"webhook"`
	ReceiverAddr string   `json:"receiverAddr"`
	// Filled counts the requests created; Approvals and Collections are
	// their ids, the reads' sample.
	Filled      int      `json:"filled"`
	Approvals   []string `json:"approvals"`
	Collections []string `json:"collections"`
	// FillSeconds is the time the fill took, all runs together, and
	// FillClients the clients its last run had.
	FillSeconds float64   `json:"fillSeconds"`
	FillClients int       `json:"fillClients,omitempty"`
	Empty       *measures `json:"empty,omitempty"`
	Backlog     *measures `json:"backlog,omitempty"`
}

func statePath(dir string) string { return filepath.Join(dir, "load.json") }

func loadState(dir string) (*state, error) {
	st := &state{}
	b, err := os.ReadFile(statePath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return st, os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return nil, err
	}
	return st, json.Unmarshal(b, st)
}

func (st *state) save(dir string) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(dir))
}
