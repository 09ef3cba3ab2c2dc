package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
)

// TestFork: the copy replays as the original; the original is left
// byte for byte; a torn last line is not copied; an existing
// destination and a source that is a link are refused.
func TestFork(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.jsonl")
	w := open(t, src, session.Options{})
	appendAll(t, w,
		session.Record{Type: session.RecMessage, Message: msg(model.RoleUser, text("The word is FIG."))},
		session.Record{Type: session.RecMessage, Message: msg(model.RoleAssistant, text("Noted."))},
	)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(src, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"message","mess`) // a torn tail
	f.Close()
	before, _ := os.ReadFile(src)

	dst := filepath.Join(dir, "sub", "b.jsonl")
	if err := session.Fork(src, dst); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(src)
	if string(after) != string(before) {
		t.Errorf("the original changed:\n%s\nwas\n%s", after, before)
	}
	copied, _ := os.ReadFile(dst)
	if strings.Contains(string(copied), `"mess`+"\n") || !strings.HasSuffix(string(copied), "\n") {
		t.Errorf("the copy holds the torn line or ends mid-line:\n%s", copied)
	}
	recs, _ := readFile(t, dst)
	msgs := session.Replay(recs).Messages
	if len(msgs) != 2 || msgs[0].Text() != "The word is FIG." || msgs[1].Text() != "Noted." {
		t.Errorf("the copy replays as %+v", msgs)
	}

	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, src, dst, want string }{
		{"destination exists", src, dst, "exists"},
		{"source is a link", link, filepath.Join(dir, "c.jsonl"), "not a regular file"},
		{"no source", filepath.Join(dir, "none.jsonl"), filepath.Join(dir, "d.jsonl"), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := session.Fork(tc.src, tc.dst); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Fork: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
