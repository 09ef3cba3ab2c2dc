package tool

import (
	"strings"
	"testing"
)

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"ANTHROPIC_API_KEY": true, "OPENAI_API_KEY": true, "GITHUB_TOKEN": true, "aws_secret": true,
		"DB_PASSWORD": true, "STRIPE_KEY": true, "PATH": false, "HOME": false, "KEYBOARD": false, "TOKENS_USED": false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRedactor(t *testing.T) {
	r := NewRedactor([]string{"GH_TOKEN=ghp_abcdefgh", "LONG_SECRET=ghp_abcdefgh_more", "SHORT_KEY=abc", "PATH=/usr/bin", "BROKEN"})
	tests := []struct{ in, want string }{
		{"token ghp_abcdefgh here", "token [REDACTED:GH_TOKEN] here"},
		{"ghp_abcdefgh_more", "[REDACTED:LONG_SECRET]"}, // the longer value wins
		{"abc and /usr/bin stay", "abc and /usr/bin stay"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := r.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var nilR *Redactor
	if nilR.Redact("x") != "x" {
		t.Error("nil Redactor changed text")
	}
}

func TestRedactWriterAcrossWrites(t *testing.T) {
	r := NewRedactor([]string{"API_TOKEN=supersecretvalue"})
	text := "a supersecretvalue b supersecretvalue"
	for split := 0; split <= len(text); split++ {
		var b strings.Builder
		w := r.Writer(&b)
		w.Write([]byte(text[:split]))
		w.Write([]byte(text[split:]))
		w.Close()
		if got, want := b.String(), "a [REDACTED:API_TOKEN] b [REDACTED:API_TOKEN]"; got != want {
			t.Fatalf("split at %d: %q, want %q", split, got, want)
		}
	}
}
