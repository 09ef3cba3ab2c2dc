package run_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestStreamedSecretRedactedAcrossDeltas: a secret the model says in
// several text deltas (the scripted model streams word by word) goes out
// as its marker in --mode json's text events and stream-json's
// text_delta events, never in its parts (red team 21 P2-9).
func TestStreamedSecretRedactedAcrossDeltas(t *testing.T) {
	for _, format := range [][]string{
		{"--mode", "json"},
		{"--output-format", "stream-json", "--include-partial-messages", "--verbose"},
	} {
		t.Run(strings.Join(format, "="), func(t *testing.T) {
			p := clitest.NewProject(t)
			clitest.WriteFile(t, filepath.Join(p.Root, ".env"), `DB_PASSWORD="correct horse battery staple"`+"\n")
			script := p.Script("s.yaml", `
agents:
  root:
    - say: "the password is correct horse battery staple ok"
`)
			code, out, errOut := p.Brood(append([]string{"run", "--model", script}, append(format, "go")...)...)
			if code != 0 {
				t.Fatalf("code %d\n%s\n%s", code, out, errOut)
			}
			for _, word := range []string{"correct", "horse", "battery", "staple"} {
				if strings.Contains(out, word) {
					t.Fatalf("stdout carries %q of the secret:\n%s", word, out)
				}
			}
			if !strings.Contains(out, "[REDACTED:.env:DB_PASSWORD]") {
				t.Fatalf("stdout lacks the marker:\n%s", out)
			}
		})
	}
}
