// Package render shows a run's events: in text mode the answer on stdout and
// a line of progress per step on stderr; in json mode one event per line on
// stdout. run, demo, subagent and tasks resume share it.
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/jsonstr"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/termsafe"
	"github.com/broodhq/brood/internal/tool"
)

// Renderer shows a run's events: in text mode the answer on stdout and a
// line of progress per step on stderr; in json mode one event per line on
// stdout.
type Renderer struct {
	mu      sync.Mutex // dispatch events arrive from the children's goroutines
	json    bool
	out     io.Writer
	err     io.Writer
	pending strings.Builder // assistant text of the current turn

	live     bool // stdout is a terminal: the text streams as it arrives
	streamed bool // this turn's text has gone to stdout already (live)
	printed  bool // the answer is on stdout

	redact  func(string) string // json mode: every line's strings (see Redacting)
	secrets *tool.Redactor      // redact's
	// text is json mode's text events, redacted across their joins (a
	// secret the model streams in pieces goes out as its marker, never in
	// parts: tool.Stream; red team 21 P2-9); textEv is the last one's.
	text     *tool.Stream
	textEv   agent.Event
	progress *Progress // text mode: the subagents' progress lines
}

// New is a renderer writing to out and errOut in mode (text or json). In
// text mode no control sequence a child or a model wrote reaches the
// terminal (errOut is the Factory's, sanitised already).
func New(out, errOut io.Writer, mode string) *Renderer {
	if mode == "json" {
		return &Renderer{json: true, out: out, err: errOut}
	}
	return &Renderer{out: termsafe.NewWriter(out), err: errOut, progress: NewProgress(errOut)}
}

// NewText is a text renderer; live streams the model's text to out as it
// arrives (out is a terminal), else the answer is printed when the model's
// last turn ends.
func NewText(out, errOut io.Writer, live bool) *Renderer {
	r := New(out, errOut, "text")
	r.live = live
	return r
}

// Mode is the output mode of a command's --json flag.
func Mode(asJSON bool) string {
	if asJSON {
		return "json"
	}
	return "text"
}

// Start announces the run and its transcript.
func (r *Renderer) Start(info Info) {
	if r.json {
		r.line(map[string]any{"type": "start", "session": info.SessionPath})
		return
	}
	fmt.Fprintf(r.err, "· session %s\n", info.SessionPath)
}

// Redacting makes every JSON line r writes (json mode) pass through
// red, and returns r: such a line leaves this process for a program.
// The model's text events are redacted across their joins.
func (r *Renderer) Redacting(red *tool.Redactor) *Renderer {
	r.redact, r.secrets = red.Redact, red
	return r
}

// jsonText sends a text event's settled part (json mode), holding back
// what may be the start of a secret.
func (r *Renderer) jsonText(ev agent.Event) {
	if r.text == nil {
		r.text = r.secrets.Stream()
	}
	r.textEv = ev
	if ev.Text = r.text.Push(ev.Text); ev.Text != "" {
		r.line(ev)
	}
}

// jsonTextFlush sends what the text events hold back (json mode), before
// any other line.
func (r *Renderer) jsonTextFlush() {
	if r.text == nil {
		return
	}
	ev := r.textEv
	if ev.Text = r.text.Flush(); ev.Text != "" {
		r.line(ev)
	}
}

func (r *Renderer) line(v any) {
	b, _ := json.Marshal(v)
	b = termsafe.JSON(jsonstr.Map(b, r.redact))
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.out, "%s\n", b)
}

// DispatchEvent shows a child's start, progress (its tool names, in batches)
// and stop.
func (r *Renderer) DispatchEvent(ev spawn.Event) {
	if r.json {
		r.line(ev)
		return
	}
	r.progress.DispatchEvent(ev)
}

// Event shows one event of the root agent.
func (r *Renderer) Event(ev agent.Event) {
	if r.json {
		switch ev.Type {
		case agent.EvText:
			r.jsonText(ev)
			return
		}
		r.jsonTextFlush()
		if ev.Type == agent.EvDone {
			return // done() prints the result
		}
		r.line(ev)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Type {
	case agent.EvText:
		r.pending.WriteString(ev.Text)
		if r.live {
			fmt.Fprint(r.out, ev.Text)
			r.streamed = true
		}
	case agent.EvRestart:
		r.pending.Reset()
		if r.streamed {
			fmt.Fprintln(r.out)
			fmt.Fprintln(r.err, "· the provider retried; the text above is being said again")
			r.streamed = false
		}
	case agent.EvToolCall:
		r.endStreamedTurn()
		r.flushThought()
		fmt.Fprintf(r.err, "  ▸ %s %s\n", ev.Tool, summarizeInput(r.err, ev.Input))
	case agent.EvToolResult:
		if ev.IsError {
			fmt.Fprintf(r.err, "  ✗ %s: %s\n", ev.Tool, firstLine(r.err, ev.Text, 160))
		}
	case agent.EvServerTool:
		if ev.Part != nil && ev.Part.Type == model.PartServerToolUse {
			r.endStreamedTurn()
			r.flushThought()
			fmt.Fprintf(r.err, "  ▸ %s %s (at the provider)\n", ev.Tool, summarizeInput(r.err, ev.Input))
		}
	case agent.EvBudgetWarning, agent.EvBudgetExceeded:
		fmt.Fprintf(r.err, "  ! %s: %s\n", ev.Type, ev.Text)
	case agent.EvInjected:
		fmt.Fprintf(r.err, "  ✉ %s\n", firstLine(r.err, ev.Text, 160))
	case agent.EvTurn:
		r.endStreamedTurn()
		r.pending.Reset()
	case agent.EvDone:
		// The model's last turn is over: the answer goes out now, before
		// brood waits for background children.
		if o := ev.Outcome; o != nil && !r.printed {
			r.printOutcome(o)
		}
	}
}

// endStreamedTurn ends the line of a turn whose text streamed to stdout.
func (r *Renderer) endStreamedTurn() {
	if r.streamed {
		fmt.Fprintln(r.out)
		r.streamed = false
		r.pending.Reset() // it was shown whole, not as a thought
	}
}

// printOutcome puts what the run answered on stdout: a finished run's
// last text; at the turn cap claude -p's "Error: Reached max turns (N)"
// (no newline after it, as claude's, but on a terminal) instead of the
// last turn's interim text, and after an interruption nothing: stderr
// has shown those texts as steps, not as the answer.
func (r *Renderer) printOutcome(o *agent.Outcome) {
	switch o.Status {
	case agent.StatusPartial, agent.StatusCancelled:
		r.printed = true
		r.endStreamedTurn()
		r.flushThought()
		if o.Status == agent.StatusPartial {
			fmt.Fprintf(r.out, "Error: Reached max turns (%d)", o.Turns)
			if r.live {
				fmt.Fprintln(r.out)
			}
		}
		return
	}
	r.printAnswer(o.Text)
}

// printAnswer puts the final text on stdout (what is left of it, when it
// streamed).
func (r *Renderer) printAnswer(text string) {
	r.printed = true
	if r.streamed {
		fmt.Fprintln(r.out)
		r.streamed = false
		return
	}
	if text != "" {
		fmt.Fprintln(r.out, strings.TrimRight(text, "\n"))
	}
}

// flushThought prints the text the model said before calling tools.
func (r *Renderer) flushThought() {
	if t := strings.TrimSpace(r.pending.String()); t != "" {
		fmt.Fprintf(r.err, "· %s\n", firstLine(r.err, t, 200))
	}
	r.pending.Reset()
}

// Done shows the run's outcome.
func (r *Renderer) Done(o *agent.Outcome, sessionPath string, t Totals) {
	children := t.Children
	if r.json {
		r.jsonTextFlush()
		r.line(map[string]any{
			"type": "result", "status": o.Status, "text": o.Text, "turns": o.Turns,
			"usage": o.Usage, "child_usage": children, "error": o.Error, "session": sessionPath,
			"cost_usd": t.Cost.USD, "cost_complete": t.Cost.Complete(),
		})
		return
	}
	r.mu.Lock()
	if !r.printed {
		r.printOutcome(o)
	}
	r.mu.Unlock()
	u := o.Usage
	fmt.Fprintf(r.err, "· %s after %d turns · tokens in %d out %d cache r/w %d/%d", o.Status, o.Turns, u.Input, u.Output, u.CacheRead, u.CacheWrite)
	if n := u.WebSearches + children.WebSearches; n > 0 {
		fmt.Fprintf(r.err, " · web searches %d", n)
	}
	if children.Total() > 0 {
		fmt.Fprintf(r.err, " · subagents in %d out %d", children.Input+children.CacheRead, children.Output)
	}
	if c := t.Cost.String(); c != "" {
		fmt.Fprintf(r.err, " · %s", c)
	}
	fmt.Fprintln(r.err)
	if o.Status == agent.StatusPartial {
		fmt.Fprintf(r.err, "· the turn cap stopped the run; continue with: brood run --resume %s \"go on\"\n", SessionID(sessionPath))
	}
}

// summarizeInput renders a tool call's input as a short label for w,
// redacted before it is cut.
func summarizeInput(w io.Writer, raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "file_path", "pattern", "path", "subagent_type", "task_id", "query"} {
		if v, ok := m[k].(string); ok && v != "" {
			return firstLine(w, v, 100)
		}
	}
	return ""
}
