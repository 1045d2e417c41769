package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// runHealthcheck succeeds when the URL answers 200; container images have
// no curl.
func runHealthcheck(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: assent healthcheck URL")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[0], nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", args[0], resp.StatusCode)
	}
	return nil
}
