// Package guard holds the edge guardrails a parent applies to a child's
// return before it accepts it (hivemind's four edges): shape (the report has
// what its envelope asked for), scope (the child changed only what it may
// write), evidence (what it claims is backed by what it did) and
// unauthorized attempts (what it tried and was refused). A finding is a
// Concern; each kind has a policy (policy.go): reject (the result is
// rejected with the concern as its reason) or warn (the result keeps its
// status). Either way the concerns travel with it to the parent model and
// into the parent's record.
//
// The tool calls they read are the parent's own record of them (made from
// what the child's code said on its protocol pipe, never from the
// transcript its tools can write), and a test run faked through the real
// command (fakepass.go) is no evidence. They hold a child's account to
// what it did, not its code to a standard: what a hostile child can do is
// bounded by the kernel sandbox, the permission rules and the parent's own
// diff of the tree.
//
// guard imports nothing of processes or records; callers pass it plain data.
package guard

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/broodhq/brood/internal/textline"
)

// Kinds of concern.
const (
	KindShape        = "shape"
	KindScope        = "scope"
	KindEvidence     = "evidence"
	KindUnauthorized = "unauthorized"
)

// DefaultSections returns the report sections a child is asked for when its
// definition declares none (the built-ins' format).
func DefaultSections() []string {
	return []string{"What I did", "What I found", "Files changed", "Problems"}
}

// DefaultTestCommands are the commands that count as running tests
// (settings: test_commands). A Bash call runs tests when one of the
// programs it runs (tool.Intent's reading: "go test", "npm test", ...)
// starts with one of them.
func DefaultTestCommands() []string {
	return []string{"go test", "npm test", "npm run test", "npx jest", "npx vitest", "yarn test", "pnpm test", "bun test", "deno test",
		"pytest", "python -m pytest", "python3 -m pytest", "tox", "nox", "cargo test", "cargo nextest", "make test", "make check",
		"gradle test", "./gradlew test", "mvn test", "ctest", "rspec", "bundle exec rspec", "mix test", "dotnet test", "jest", "vitest", "phpunit"}
}

// Concern is one finding about a child's return.
type Concern struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

func (c Concern) String() string { return c.Kind + ": " + c.Text }

// Call is one tool call the child made, as the parent recorded it.
type Call struct {
	Tool    string
	Command string // Bash
	Path    string // Read/Write/Edit: the file, absolute or relative to the workspace
	Result  string
	IsError bool
	// Refused: the transcript records brood's own refusal of the call.
	Refused bool
}

// Input is what the guards look at.
type Input struct {
	Status  string
	Summary string
	// Sections are the report headings the child was asked for.
	Sections []string
	// Changed are the files the child really changed, relative to the
	// workspace (the parent's own diff or the isolated patch), and Observed
	// says whether that diff exists at all.
	Changed  []string
	Observed bool
	// WriteScope are the path globs the child may write (its definition's
	// Edit/Write rules, or the task's declared scope); empty means no scope.
	WriteScope []string
	// Refs are the git refs the child made, moved or deleted (a commit, a
	// tag, a stash): outside every write scope.
	Refs      []string
	Workspace string
	// Claimed are the files the child says it changed (its files_changed).
	Claimed []string
	// Calls are the child's tool calls; CallsKnown says its transcript was
	// read (so no calls means it made none).
	Calls      []Call
	CallsKnown bool
	// Fork is set for a fork, which starts with its parent's context: a
	// report after no call of its own may rest on what the parent did.
	Fork bool
	// TestCommands override DefaultTestCommands when not nil.
	TestCommands []string
	// Programs reduces a Bash command line to the programs it runs (with
	// their subcommands), as tool.Intent does; nil uses the first word.
	Programs func(command string) []string
	// StatusCommands are the simple commands of a Bash command line whose
	// success the line's exit status 0 proves (trust.StatusCommands); nil
	// takes the whole line's status for every command in it.
	StatusCommands func(command string) []string
	// Undermined says why a command line's exit status cannot be taken
	// for its commands' own ("" when it can: trust.Undermined): a trap, a
	// function or alias in the line, a variable that changes what runs.
	// nil: no line is undermined.
	Undermined func(command string) string
	// ReadOnly says whether a Bash command line (or one command of it) is
	// read-only as brood's permissions judge it (tool.ReadOnlyCommand);
	// nil: none is. Commands splits a line into its commands and writing
	// redirections (trust.LineCommands); nil: every Bash call that runs no
	// test is a change. A Bash call neither calls read-only is a change.
	ReadOnly func(command string) bool
	Commands func(command string) ([]Segment, bool)
	// Dirs are the directories a command line changes to with cd or pushd,
	// in order, as written (trust.Dirs); nil: it changes to none.
	Dirs func(command string) []string
	// RefusalFlags: the calls carry brood's own refusal flags (Call.Refused,
	// a transcript this build wrote): a result's text, which a file or a
	// program chose, never counts as a refusal then.
	RefusalFlags bool
	// Advice, when set, is the parent's own advice for a refused call (what
	// follows "no one is here to give it"; "" for none): the refusal's
	// words in the child's transcript are then kept only up to its advice,
	// which the child could have written (review43 P1-1).
	Advice func(c Call) string
	// Known writes out a program word a Bash line gave a known value
	// before it ran (PY=python3; "$PY" -m pytest: trust.KnownPrograms),
	// for the evidence checks; nil: such a program stays computed.
	Known func(command string) string
}

// known is in with each Bash call's line as Known writes it out.
func (in Input) known() Input {
	if in.Known == nil {
		return in
	}
	calls := slices.Clone(in.Calls)
	for i, c := range calls {
		if c.Tool == "Bash" && c.Command != "" {
			calls[i].Command = in.Known(c.Command)
		}
	}
	in.Calls = calls
	return in
}

// Check runs every guard and returns the concerns, in a stable order.
func Check(in Input) []Concern {
	var out []Concern
	out = append(out, shape(in)...)
	out = append(out, scope(in)...)
	out = append(out, evidence(in.known())...)
	out = append(out, unauthorized(in)...)
	return out
}

func shape(in Input) []Concern {
	if in.Status != "done" {
		return nil
	}
	if strings.TrimSpace(in.Summary) == "" {
		return []Concern{{KindShape, "the child reported done with an empty summary"}}
	}
	var missing []string
	for _, s := range in.Sections {
		if !hasHeading(in.Summary, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return []Concern{{KindShape, fmt.Sprintf("the report lacks the section(s) it was asked for: %s", strings.Join(missing, ", "))}}
}

// hasHeading reports whether text has a markdown heading (any level) or a
// bold line naming section, in any case.
func hasHeading(text, section string) bool {
	want := strings.ToLower(section)
	for _, line := range strings.Split(text, "\n") {
		l := strings.ToLower(strings.TrimSpace(line))
		l = strings.TrimLeft(l, "#")
		l = strings.Trim(strings.TrimSpace(l), "*:")
		if strings.HasPrefix(strings.TrimSpace(l), want) {
			return true
		}
	}
	return false
}

func scope(in Input) []Concern {
	var out []Concern
	if len(in.WriteScope) > 0 && len(in.Refs) > 0 {
		refs := strings.Join(in.Refs, "; ")
		if len(in.Refs) > 50 {
			refs = fmt.Sprintf("%s; and %d more", strings.Join(in.Refs[:50], "; "), len(in.Refs)-50)
		}
		out = append(out, Concern{KindScope, fmt.Sprintf("changed git refs (%s), which what it may write (%s) does not allow", refs, strings.Join(in.WriteScope, ", "))})
	}
	return append(out, scopeFiles(in)...)
}

func scopeFiles(in Input) []Concern {
	if len(in.WriteScope) == 0 || len(in.Changed) == 0 {
		return nil
	}
	var outside []string
	for _, f := range in.Changed {
		if !inScope(in.WriteScope, f) {
			outside = append(outside, f)
		}
	}
	if len(outside) == 0 {
		return nil
	}
	return []Concern{{KindScope, fmt.Sprintf("changed %s outside what it may write (%s)", strings.Join(outside, ", "), strings.Join(in.WriteScope, ", "))}}
}

func inScope(globs []string, file string) bool {
	file = filepath.ToSlash(filepath.Clean(file))
	for _, g := range globs {
		g = strings.TrimPrefix(filepath.ToSlash(g), "./")
		if ok, _ := doublestar.Match(g, file); ok {
			return true
		}
		if strings.HasSuffix(g, "/**") && file == strings.TrimSuffix(g, "/**") {
			return true
		}
	}
	return false
}

func unauthorized(in Input) []Concern {
	var out []Concern
	for _, c := range in.Calls {
		if !c.IsError {
			continue
		}
		if r := strings.TrimSpace(c.Result); in.wasRefused(c) {
			// (the refusal names the call again: said once, newuser P3-4)
			why := in.refusalWhy(c, r)
			if m := namedAgain().FindStringIndex(why); m != nil && strings.HasPrefix(why[m[1]:], "needs approval") {
				why = why[m[1]:]
			}
			out = append(out, Concern{KindUnauthorized, fmt.Sprintf("%s was refused: %s", describe(c), why)})
		}
	}
	return out
}

// wasRefused reports whether brood refused c: its flag where the
// transcript carries them, else its result's words.
func (in Input) wasRefused(c Call) bool {
	if in.RefusalFlags {
		return c.Refused
	}
	return refused(c.Result)
}

// refused reports whether a tool result is a refusal: the permission rules
// or the delegation scope said no, so the call never ran.
func refused(result string) bool {
	r := strings.TrimSpace(result)
	return strings.HasPrefix(r, "permission denied") || strings.HasPrefix(r, "delegation refused") || strings.Contains(r, "is refused (")
}

func describe(c Call) string {
	switch {
	case c.Command != "":
		return fmt.Sprintf("%s %q", c.Tool, textline.Line(c.Command, 160))
	case c.Path != "":
		return fmt.Sprintf("%s %s", c.Tool, textline.Line(c.Path, 160))
	}
	return c.Tool
}

// refusalWhy is what a refused call's concern says of it: the refusal's
// line with its advice, which is the parent's own where Input.Advice is
// set (the transcript's words only up to "no one is here to give it").
func (in Input) refusalWhy(c Call, r string) string {
	if in.Advice == nil {
		return refusalLine(r)
	}
	head, _, cut := strings.Cut(textline.Line(r, 0), refusalAdvice)
	why := textline.Clip(head, 240)
	if !cut {
		return why
	}
	why += refusalAdvice
	if adv := in.Advice(c); adv != "" {
		why += "; " + adv
	}
	return why
}
