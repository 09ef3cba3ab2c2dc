package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/broodhq/brood/internal/agent"
)

// renderer shows a run's events: in text mode the answer on stdout and a
// line of progress per step on stderr; in json mode one event per line on
// stdout.
type renderer struct {
	json    bool
	out     io.Writer
	err     io.Writer
	pending strings.Builder // assistant text of the current turn
}

func newRenderer(app *App, mode string) *renderer {
	return &renderer{json: mode == "json", out: app.Out, err: app.Err}
}

func (r *renderer) start(sessionPath string) {
	if r.json {
		r.line(map[string]any{"type": "start", "session": sessionPath})
		return
	}
	fmt.Fprintf(r.err, "· session %s\n", sessionPath)
}

func (r *renderer) line(v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(r.out, "%s\n", b)
}

func (r *renderer) event(ev agent.Event) {
	if r.json {
		switch ev.Type {
		case agent.EvDone:
			return // done() prints the result
		}
		r.line(ev)
		return
	}
	switch ev.Type {
	case agent.EvText:
		r.pending.WriteString(ev.Text)
	case agent.EvRestart:
		r.pending.Reset()
	case agent.EvToolCall:
		r.flushThought()
		fmt.Fprintf(r.err, "  ▸ %s %s\n", ev.Tool, summarizeInput(ev.Input))
	case agent.EvToolResult:
		if ev.IsError {
			fmt.Fprintf(r.err, "  ✗ %s: %s\n", ev.Tool, firstLine(ev.Text, 160))
		}
	case agent.EvBudgetWarning, agent.EvBudgetExceeded:
		fmt.Fprintf(r.err, "  ! %s: %s\n", ev.Type, ev.Text)
	case agent.EvInjected:
		fmt.Fprintf(r.err, "  ✉ %s\n", firstLine(ev.Text, 160))
	case agent.EvTurn:
		r.pending.Reset()
	}
}

// flushThought prints the text the model said before calling tools.
func (r *renderer) flushThought() {
	if t := strings.TrimSpace(r.pending.String()); t != "" {
		fmt.Fprintf(r.err, "· %s\n", firstLine(t, 200))
	}
	r.pending.Reset()
}

func (r *renderer) done(o *agent.Outcome, sessionPath string) {
	if r.json {
		r.line(map[string]any{
			"type": "result", "status": o.Status, "text": o.Text, "turns": o.Turns,
			"usage": o.Usage, "error": o.Error, "session": sessionPath,
		})
		return
	}
	if o.Text != "" {
		fmt.Fprintln(r.out, strings.TrimRight(o.Text, "\n"))
	}
	u := o.Usage
	fmt.Fprintf(r.err, "· %s after %d turns · tokens in %d out %d cache r/w %d/%d\n", o.Status, o.Turns, u.Input, u.Output, u.CacheRead, u.CacheWrite)
	if o.Status == agent.StatusPartial {
		fmt.Fprintf(r.err, "· the turn cap stopped the run; continue with: brood run --session %s \"go on\"\n", sessionPath)
	}
}

// summarizeInput renders a tool call's input as a short label.
func summarizeInput(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "file_path", "pattern", "path", "subagent_type", "task_id"} {
		if v, ok := m[k].(string); ok && v != "" {
			return firstLine(v, 100)
		}
	}
	return ""
}

func firstLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}
