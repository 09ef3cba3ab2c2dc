package render

import (
	"encoding/json"
	"strings"

	"github.com/broodhq/brood/internal/spawn"
)

// SubagentStats is the roll-up of the subagents a run spawned, refused and
// lost.
type SubagentStats struct {
	Spawned   int            `json:"spawned"`
	Completed int            `json:"completed"`
	Failed    int            `json:"failed"`
	Partial   int            `json:"partial"`
	Checkpt   int            `json:"checkpoint"`
	MaxDepth  int            `json:"max_depth"`
	Requested Requested      `json:"requested"`
	Killed    Killed         `json:"killed"`
	Refused   Refused        `json:"refused"`
	ByType    map[string]int `json:"by_type"`
	// InBackground counts the Task calls that asked for
	// run_in_background; BySubagents the spawned a subagent (not the
	// root) asked for.
	InBackground int `json:"started_in_background"`
	BySubagents  int `json:"spawned_by_subagents"`
}

// Requested counts Task calls by how they asked to run.
type Requested struct {
	Background int `json:"background"`
	Foreground int `json:"foreground"`
	Unset      int `json:"unset"`
}

// Killed counts children stopped before they finished: by their parent
// (cancelled: Ctrl-C, TaskStop), by the user (brood tasks kill) or by the
// system (lifeguard, hard timeout, a crash).
type Killed struct {
	Parent int `json:"parent"`
	User   int `json:"user"`
	System int `json:"system"`
}

// Refused counts Task calls that spawned nothing.
type Refused struct {
	DepthLimit       int `json:"depth_limit"`
	ConcurrencyLimit int `json:"concurrency_limit"`
	Budget           int `json:"budget"`
	Invalid          int `json:"invalid"` // unknown agent type, bad arguments, a refused definition
}

func newSubagentStats() SubagentStats { return SubagentStats{ByType: map[string]int{}} }

func (s *SubagentStats) note(ev spawn.Event) {
	switch ev.Type {
	case "dispatch_start":
		s.Spawned++
		s.ByType[ev.Agent]++
		s.MaxDepth = max(s.MaxDepth, ev.Depth)
		if ev.Depth > 1 {
			s.BySubagents++
		}
	case "dispatch_stop":
		switch ev.Status {
		case "done":
			s.Completed++
		case "partial":
			s.Partial++
		case "checkpoint":
			s.Checkpt++
		case "killed":
			s.Killed.System++
		case "cancelled":
			s.Killed.Parent++
		default:
			s.Failed++
		}
	}
}

func (s *SubagentStats) noteRequest(input json.RawMessage) {
	var in struct {
		Background *bool `json:"run_in_background"`
	}
	_ = json.Unmarshal(input, &in)
	switch {
	case in.Background == nil:
		s.Requested.Unset++
	case *in.Background:
		s.Requested.Background++
		s.InBackground++
	default:
		s.Requested.Foreground++
	}
}

func (s *SubagentStats) noteRefusal(text string) {
	t := strings.ToLower(text)
	switch {
	case strings.Contains(t, "depth"):
		s.Refused.DepthLimit++
	case strings.Contains(t, "concurren"):
		s.Refused.ConcurrencyLimit++
	case strings.Contains(t, "budget"):
		s.Refused.Budget++
	default:
		s.Refused.Invalid++
	}
}
