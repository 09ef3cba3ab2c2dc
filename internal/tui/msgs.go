package tui

import (
	"strings"
	"unicode"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/termsafe"
	"github.com/broodhq/brood/internal/textline"
)

// The messages the engine sends the model.
type (
	agentMsg    struct{ ev agent.Event }         // the root agent's stream
	dispatchMsg struct{ ev spawn.Event }         // a dispatch anywhere in the tree
	turnDoneMsg struct{ outcome *agent.Outcome } // the root's turn ended
	resultMsg   struct {
		id, summary, errText string
		desc                 string      // what it was asked to do
		model                string      // the model the task ran on
		own                  model.Usage // its own usage, its children's not included
	}
	taskModelMsg struct{ id, model, desc string } // the model a running task runs on, and what it was asked
	sessionMsg   struct {
		path    string
		records []session.Record
	}
	killedMsg struct {
		id  string
		err error
	}
	askMsg      struct{ req askRequest }
	noticeMsg   struct{ text string }
	shutdownMsg struct{}
	tickMsg     struct{} // a redraw
	clockMsg    struct{} // the once-a-second redraw
)

// clean makes text from a child, a tool or a model safe to print: no
// escape sequences or other control characters reach the terminal (tabs
// become spaces; newlines stay only where keepNewlines), and invisible
// characters are shown escaped (termsafe.EscapeHidden).
func clean(s string, keepNewlines bool) string {
	s = termsafe.EscapeHidden(s) // TAG characters, zero-width ones: shown escaped
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n' && keepNewlines:
			b.WriteRune(r)
		case r == '\t':
			b.WriteString("    ")
		case r == '\n' || r == '\r':
			b.WriteByte(' ')
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			// C0/C1 controls (ESC, CSI, BEL...) and bidi overrides.
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func firstLine(s string, max int) string { return clean(textline.Summary(s, max), false) }

func shortID(id string) string {
	if len(id) > 10 {
		return id[len(id)-6:]
	}
	return id
}
