package tui_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"

	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/tui"
)

// TestShippedSessionNotReopened (red team P1-6, the interactive mode):
// brood --continue reopens the user's newest session, passing over (and
// saying so) a newer one a repository shipped; --resume of the shipped
// one, by id or path, is refused naming it.
func TestShippedSessionNotReopened(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	dir := filepath.Join(root, ".brood", "sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dir, ulid.Make().String()+".jsonl")
	if err := session.Claim(mine, ""); err != nil {
		t.Fatal(err)
	}
	// The user's transcript is written by brood (its first line sealed
	// into its owner record); the shipped one by the repository.
	w, err := session.Open(mine, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(session.Record{Type: session.RecMeta}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	shipped := filepath.Join(dir, ulid.Make().String()+".jsonl")
	if err := os.WriteFile(shipped, []byte(`{"type":"meta","time":"2026-01-01T00:00:00Z"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := session.IDOf(shipped)
	for _, tc := range []struct {
		name, resume string
		cont         bool
		want, warn   string
	}{
		{"continue", "", true, mine, "1 session(s) in " + dir},
		{"resume id", id, false, "", ""},
		{"resume path", shipped, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warn bytes.Buffer
			got, err := tui.SessionPath(root, tc.resume, tc.cont, &warn)
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), "session "+id+" was not made by you") {
					t.Errorf("got %q, %v; want a refusal naming %s", got, err, id)
				}
				return
			}
			if err != nil || got != tc.want || !strings.Contains(warn.String(), tc.warn) {
				t.Errorf("got %q, %v, warned %q; want %s, warned %q", got, err, warn.String(), tc.want, tc.warn)
			}
		})
	}
}
