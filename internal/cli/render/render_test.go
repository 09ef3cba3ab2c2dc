package render

import (
	"strings"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/agent"
)

// buf is a writer whose contents the test reads between events.
type buf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *buf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestTextStreamsOnATerminal: on a terminal each chunk of the model's text
// is on stdout as soon as it arrives, and the answer is not printed twice.
func TestTextStreamsOnATerminal(t *testing.T) {
	var out, errOut buf
	r := NewText(&out, &errOut, true)
	r.Start(Info{SessionPath: "/p/.brood/sessions/01ABC.jsonl"})
	r.Event(agent.Event{Type: agent.EvTurn, Turn: 1})
	for i, chunk := range []string{"There are ", "four ", "files."} {
		r.Event(agent.Event{Type: agent.EvText, Text: chunk})
		if want := strings.Join([]string{"There are ", "four ", "files."}[:i+1], ""); out.String() != want {
			t.Fatalf("after chunk %d stdout = %q, want %q", i, out.String(), want)
		}
	}
	o := &agent.Outcome{Status: agent.StatusDone, Text: "There are four files.", Turns: 1}
	r.Event(agent.Event{Type: agent.EvDone, Outcome: o})
	r.Done(o, "/p/.brood/sessions/01ABC.jsonl", Totals{Children: o.Usage})
	if out.String() != "There are four files.\n" {
		t.Errorf("stdout = %q", out.String())
	}
}

// TestTextOnAPipe: not on a terminal, stdout holds only the answer, printed
// when the model's last turn ends (before background children are waited
// for); what the model said before a tool call is progress on stderr.
func TestTextOnAPipe(t *testing.T) {
	var out, errOut buf
	r := NewText(&out, &errOut, false)
	r.Start(Info{SessionPath: "/p/s.jsonl"})
	r.Event(agent.Event{Type: agent.EvTurn, Turn: 1})
	r.Event(agent.Event{Type: agent.EvText, Text: "Let me look."})
	r.Event(agent.Event{Type: agent.EvToolCall, Tool: "LS", Input: []byte(`{"path":"."}`)})
	r.Event(agent.Event{Type: agent.EvTurn, Turn: 2})
	r.Event(agent.Event{Type: agent.EvText, Text: "Four files."})
	if out.String() != "" {
		t.Fatalf("stdout before the turn ended: %q", out.String())
	}
	o := &agent.Outcome{Status: agent.StatusDone, Text: "Four files.", Turns: 2}
	r.Event(agent.Event{Type: agent.EvDone, Outcome: o})
	if out.String() != "Four files.\n" {
		t.Fatalf("stdout at the end of the last turn = %q", out.String())
	}
	r.Done(o, "/p/s.jsonl", Totals{Children: o.Usage})
	if out.String() != "Four files.\n" || !strings.Contains(errOut.String(), "· Let me look.") {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}
