// Package workflow is brood's declarative multi-agent plans: parsing a plan
// file (YAML, TOML or JSON, one JSON Schema), checking it (ids, waves and
// their cycles, template references, output schemas), templates and
// selectors over inputs and earlier outputs, the four phase shapes
// (parallel, each with a pipeline of stages, until_quiet, votes), and the
// executor that runs a plan through a call.Runner with a journal, so that a
// run interrupted at any moment continues without re-running a finished
// call. It knows nothing of processes: engines supply the Runner and the
// journal.
package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Defaults of a plan.
const (
	DefaultMaxAgents   = 1000
	DefaultMaxRounds   = 5
	DefaultQuietRounds = 1
	DefaultEachGuess   = 10 // items assumed for an `each` whose items come from outputs
)

// Plan is a parsed plan file.
type Plan struct {
	Name        string           `json:"name"`
	Description string           `json:"description,omitempty"`
	Concurrency int              `json:"concurrency,omitempty"`
	MaxAgents   int              `json:"max_agents,omitempty"`
	MaxTokens   int64            `json:"max_tokens,omitempty"`
	Inputs      map[string]Input `json:"inputs,omitempty"`
	Phases      []Phase          `json:"phases"`

	// file and lines name the file the plan was parsed from and find a
	// field's line in it (nil: not parsed from a file).
	file  string
	lines func(field string) int
}

// Line is the line of the file the plan came from where field (as
// phases[1].votes.accept) is, or its nearest enclosing field; 1 when none
// is found, 0 for a plan that was not parsed from a file.
func (p *Plan) Line(field string) int {
	if p.lines == nil {
		return 0
	}
	if n := p.lines(field); n > 0 {
		return n
	}
	return 1
}

// Input is a declared input of a plan (`--input name=value`).
type Input struct {
	Description string `json:"description,omitempty"`
	// Type is string (default), number, boolean, list or json; a value
	// given on the command line is parsed as that type.
	Type     string `json:"type,omitempty"`
	Default  any    `json:"default,omitempty"`
	Required bool   `json:"required,omitempty"`
}

// Call is one agent call of a plan.
type Call struct {
	ID          string          `json:"id,omitempty"`
	Agent       string          `json:"agent"`
	Prompt      string          `json:"prompt"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Isolation   string          `json:"isolation,omitempty"`
	MaxTurns    int             `json:"max_turns,omitempty"`
	Timeout     string          `json:"timeout,omitempty"`
	// DependsOn names other tasks of the same parallel phase.
	DependsOn []string `json:"depends_on,omitempty"`
}

// Phase is one step of a plan; exactly one of Parallel, Each, UntilQuiet
// and Votes is set.
type Phase struct {
	ID string `json:"id"`
	// DependsOn names the phases this one needs. Unset, a phase depends on
	// the one before it; an empty list starts it in the first wave.
	DependsOn *[]string `json:"depends_on,omitempty"`

	Parallel []Call `json:"parallel,omitempty"`

	// Each is a selector over inputs and earlier outputs giving the items;
	// every item runs through Stages, items in parallel with no barrier.
	Each   string `json:"each,omitempty"`
	As     string `json:"as,omitempty"`
	Stages []Call `json:"stages,omitempty"`
	// Expect is how many items to assume when estimating the run.
	Expect int `json:"expect,omitempty"`

	UntilQuiet *UntilQuiet `json:"until_quiet,omitempty"`
	Votes      *Votes      `json:"votes,omitempty"`
}

// UntilQuiet repeats a call whose output holds a list of findings, dedupes
// them by Key, and stops after QuietRounds rounds that add nothing, or at
// MaxRounds.
type UntilQuiet struct {
	Call
	Findings    string `json:"findings,omitempty"` // the output field holding the list (default "findings")
	Key         string `json:"key"`
	QuietRounds int    `json:"quiet_rounds,omitempty"`
	MaxRounds   int    `json:"max_rounds,omitempty"`
	PerRound    int    `json:"per_round,omitempty"` // agents per round (default 1)
}

// Votes runs the same call Count times and accepts the value of Field by
// Accept.
type Votes struct {
	Call
	Count  int    `json:"count"`
	Field  string `json:"field"`
	Accept Accept `json:"accept"`
}

// Accept is majority, unanimous, or at_least K.
type Accept struct {
	Rule    string // majority | unanimous | at_least
	AtLeast int
}

// UnmarshalJSON reads "majority", "unanimous" or {"at_least": K}.
func (a *Accept) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		a.Rule = s
		return nil
	}
	var o struct {
		AtLeast int `json:"at_least"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	a.Rule, a.AtLeast = "at_least", o.AtLeast
	return nil
}

// MarshalJSON is the inverse of UnmarshalJSON.
func (a Accept) MarshalJSON() ([]byte, error) {
	if a.Rule == "at_least" {
		return json.Marshal(map[string]int{"at_least": a.AtLeast})
	}
	return json.Marshal(a.Rule)
}

// Shape names the phase's shape.
func (p *Phase) Shape() string {
	switch {
	case p.Parallel != nil:
		return "parallel"
	case p.Each != "":
		return "each"
	case p.UntilQuiet != nil:
		return "until_quiet"
	case p.Votes != nil:
		return "votes"
	}
	return ""
}

// Deps are the phase ids this phase depends on (prev is the phase before
// it, "" for the first).
func (p *Phase) Deps(prev string) []string {
	if p.DependsOn != nil {
		return *p.DependsOn
	}
	if prev == "" {
		return nil
	}
	return []string{prev}
}

// timeout parses a call's timeout ("" is none).
func (c *Call) timeout() (time.Duration, error) {
	if c.Timeout == "" {
		return 0, nil
	}
	return time.ParseDuration(c.Timeout)
}

// Clone returns a deep copy of a plan (through JSON).
func (p *Plan) Clone() *Plan {
	b, _ := json.Marshal(p)
	var q Plan
	_ = json.Unmarshal(b, &q)
	return &q
}

// decodeStrict decodes JSON into v, refusing unknown fields.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}
