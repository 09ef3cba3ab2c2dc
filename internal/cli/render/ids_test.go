package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/spawn"
)

// TestSiblingIDsNeverLookAlike (issue 25 item 16): progress lines show each
// task by the shortest prefix that tells it from the others, at least six
// characters past the timestamp part siblings of one millisecond share.
func TestSiblingIDsNeverLookAlike(t *testing.T) {
	const (
		a = "01KBN5Q7MZ8XRTABCDEFGHJKMN"
		b = "01KBN5Q7MZ8XRTQWERTYZZZZZZ"
	)
	var out, errb bytes.Buffer
	r := New(&out, &errb, "text")
	for _, ev := range []spawn.Event{
		{Type: "dispatch_start", TaskID: a, Agent: "explore"},
		{Type: "dispatch_start", TaskID: b, Agent: "explore"},
		{Type: "progress", TaskID: a, Agent: "explore", Tools: []string{"Read"}},
		{Type: "progress", TaskID: b, Agent: "explore", Tools: []string{"Grep"}},
		{Type: "dispatch_stop", TaskID: a, Agent: "explore", Status: "done"},
	} {
		r.DispatchEvent(ev)
	}
	want := []string{
		"  [explore 01KBN5Q7MZ8XRTAB] Read",
		"  [explore 01KBN5Q7MZ8XRTQW] Grep",
		"  [explore 01KBN5Q7MZ8XRTAB] done in",
	}
	got := strings.Split(strings.TrimSpace(errb.String()), "\n")
	if len(got) != len(want) {
		t.Fatalf("stderr:\n%s", errb.String())
	}
	for i := range want {
		if !strings.HasPrefix(strings.TrimLeft(got[i], " "), strings.TrimLeft(want[i], " ")) {
			t.Errorf("line %d = %q, want %q…", i, got[i], want[i])
		}
	}
}
