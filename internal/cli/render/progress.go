package render

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/shortid"
	"github.com/broodhq/brood/internal/spawn"
)

// Progress is a run's subagent progress for a person, one line per step
// on stderr: a child's tools, its budget warnings, and its end with how
// many of the run's subagents are done ("3/20 done"). Every task is shown
// by its shortest unique id prefix (shortid). Safe for concurrent use:
// events come from the children's goroutines.
type Progress struct {
	w       io.Writer
	mu      sync.Mutex
	ids     shortid.Set
	started map[string]bool
	done    int
}

// NewProgress writes progress lines to w (the Factory's stderr).
func NewProgress(w io.Writer) *Progress {
	return &Progress{w: w, started: map[string]bool{}}
}

// DispatchEvent shows one event of a subagent.
func (p *Progress) DispatchEvent(ev spawn.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Every task seen counts for the prefixes, shown or not: siblings
	// started together are told apart from their first line.
	id := p.ids.Show(ev.TaskID)
	if ev.TaskID != "" {
		p.started[ev.TaskID] = true
	}
	switch ev.Type {
	case "progress":
		fmt.Fprintf(p.w, "  [%s %s] %s\n", ev.Agent, id, strings.Join(ev.Tools, ", "))
	case "budget_warning", "budget_exceeded":
		fmt.Fprintf(p.w, "  ! [%s %s] %s: %s\n", ev.Agent, id, ev.Type, firstLine(p.w, ev.Text, 160))
	case "dispatch_stop":
		p.done++
		fmt.Fprintf(p.w, "  [%s %s] %s in %s · tokens in %d out %d · %d/%d done\n", ev.Agent, id, ev.Status, cmdutil.Dur(ev.WallMS),
			ev.Usage.Input+ev.Usage.CacheRead, ev.Usage.Output, p.done, len(p.started))
		if ev.Status != "done" && ev.Text != "" {
			// A rejection's reason ends with the refusal's advice, the
			// rule to add (bounded by the guardrails): shown whole.
			n := 200
			if ev.Status == dispatch.StatusRejected {
				n = 1500
			}
			fmt.Fprintf(p.w, "  [%s %s] %s\n", ev.Agent, id, firstLine(p.w, ev.Text, n))
		}
	}
}
