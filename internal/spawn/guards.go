package spawn

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/guard"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/tool"
	"github.com/broodhq/brood/internal/trust"
)

// maxGuardTranscript bounds how much of a child's transcript the guards
// read: the file is the child's, and its size is the child's choice.
const maxGuardTranscript = 32 << 20

// guardrails runs the edge guardrails over a child's return and applies
// their policies (settings guardrails.*): a done result with a finding
// whose policy is reject is rejected, its status `rejected` and its reason
// in the result's error and the verdict, resumable with that reason as the
// follow-up ("Reject if: DONE without verification evidence"). A partial
// or a checkpoint claims no success (a checkpoint is how a child reports
// being blocked, by a refusal say), and a failed, killed or cancelled run
// none at all: their findings stay concerns. It returns every finding,
// whatever its policy, as the lines the parent model sees.
func (d *Dispatcher) guardrails(j *job, res *dispatch.Result, v *dispatch.Verdict, want dispatch.Expect, calls []guard.Call, known bool, venvs trust.VenvPins) []string {
	cs := d.concerns(j.name, j.env, res, want, calls, known, venvs)
	var lines []string
	for _, c := range cs {
		lines = append(lines, c.String())
	}
	v.Concerns = lines
	if res.Status != dispatch.StatusDone {
		return lines
	}
	rej := guard.Rejecting(cs, d.cfg.Settings.Guardrails.Policies())
	if len(rej) == 0 {
		return lines
	}
	reason := guard.Reason(rej)
	res.Status, res.ResumeHandle = dispatch.StatusRejected, j.env.TaskID
	res.Error = "rejected by its parent's guardrails (" + kindsOf(rej) + "): " + guard.Said(rej)
	v.Status, v.Accepted, v.Error, v.Rejected = res.Status, false, res.Error, reason
	return lines
}

func kindsOf(cs []guard.Concern) string {
	var kinds []string
	for _, c := range cs {
		if !slices.Contains(kinds, c.Kind) {
			kinds = append(kinds, c.Kind)
		}
	}
	return strings.Join(kinds, ", ")
}

// rejectedFollowUp is the follow-up a resume of a task its parent's
// guardrails rejected starts from: the reason, then the caller's own
// prompt (which may be empty). Any other task keeps the prompt as given.
func rejectedFollowUp(t *dispatch.Task, prompt string) string {
	if t == nil || t.Verdict == nil || t.Status != dispatch.StatusRejected || t.Verdict.Rejected == "" {
		return prompt
	}
	f := guard.FollowUp(t.Verdict.Rejected)
	if p := strings.TrimSpace(prompt); p != "" {
		f += "\n\n" + p
	}
	return f
}

// concerns runs the edge guardrails over a child's return. What the child
// may write comes from the parent's registry, never from its records; the
// tool calls are the parent's own record of them (recordCalls), made from
// what the child's own code said on its protocol pipe, never from its
// transcript, which the child's tools can write: appending forged test
// runs to it, or truncating it to hide refused calls, changes no verdict.
// A custom agent is judged for the sections its definition declares
// (sections:), none when it declares none: only the built-ins and forks
// are asked for the built-in report's four.
func (d *Dispatcher) concerns(name string, env *dispatch.Envelope, res *dispatch.Result, want dispatch.Expect, calls []guard.Call, known bool, venvs trust.VenvPins) []guard.Concern {
	in := guard.Input{
		Status: res.Status, Summary: res.Summary,
		Workspace: env.Workspace, Calls: calls, CallsKnown: known, Fork: env.Fork, Claimed: res.FilesChanged,
		Programs: func(cmd string) []string {
			return strings.Split(strings.TrimPrefix(tool.Intent("Bash", bashInput(cmd)), "Bash "), " && ")
		},
		StatusCommands: trust.StatusCommands,
		Undermined: func(cmd string) string {
			return trust.UnderminedBy(cmd, func(p string) bool { return venvs.Trusts(env.Workspace, p) })
		},
		ReadOnly:     tool.ReadOnlyCommand,
		Commands:     lineSegments,
		Known:        trust.KnownPrograms,
		Dirs:         func(cmd string) []string { return trust.Dirs(cmd, env.Workspace) },
		RefusalFlags: true,
		Advice:       parentAdvice(env),
		TestCommands: d.cfg.Settings.TestCommands,
	}
	if want.Observed {
		in.Changed, in.Observed, in.Refs = want.Changed, true, want.Refs
	} else {
		in.Changed = res.FilesChanged
	}
	def, ok := d.cfg.Registry.Get(name)
	switch {
	case ok && len(def.Sections) > 0:
		in.Sections = def.Sections
	case !ok || def.Source == registry.SourceBuiltin || env.Fork:
		in.Sections = guard.DefaultSections()
	}
	if ok {
		in.WriteScope = writeScope(def.ToolRules)
	}
	return guard.Check(in)
}

// writeScope is the path globs of a definition's Edit and Write rules.
func writeScope(rules []string) []string {
	var out []string
	for _, r := range rules {
		for _, t := range []string{"Edit(", "Write(", "MultiEdit("} {
			if spec, ok := strings.CutPrefix(r, t); ok && strings.HasSuffix(spec, ")") {
				out = append(out, strings.TrimSuffix(spec, ")"))
			}
		}
	}
	return out
}

func bashInput(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return b
}

// callSet gathers a transcript's tool calls with their results, in order.
type callSet struct {
	byID  map[string]int
	calls []guard.Call
}

// add takes one record of the transcript: a call, or a call's result.
func (cs *callSet) add(r session.Record) {
	switch r.Type {
	case session.RecToolCall:
		if cs.byID == nil {
			cs.byID = map[string]int{}
		}
		cs.byID[r.ToolID] = len(cs.calls)
		c := guard.Call{Tool: tool.CanonicalName(r.Tool)}
		c.Command, c.Path = callInput(r.Input)
		cs.calls = append(cs.calls, c)
	case session.RecToolResult:
		if i, ok := cs.byID[r.ToolID]; ok {
			cs.calls[i].Result, cs.calls[i].IsError, cs.calls[i].Refused = r.Output, r.IsError, r.Refused
			if len(r.Input) > 0 {
				// A hook replaced the model's input: this is what ran.
				cs.calls[i].Command, cs.calls[i].Path = callInput(r.Input)
			}
		}
	}
}

// transcriptCalls reads the tool calls and their results from a child's
// transcript (the child's account, compared with the parent's record by
// CallsDisagreement; never judged), through the task directory's beneath-resolution like every
// other read of a child-writable file (no link followed, a regular file
// only, never blocking on a FIFO), and no more than maxGuardTranscript.
// ok is false when there is no transcript to read (no calls then proves
// nothing). It reads the lines as session.Read does (the same scanner
// bounds, a line that is not a record skipped) but decodes only those that
// may be a tool call or result (mayBeToolRecord): the system prompt and
// the messages, most of the file, are never unmarshalled.
func transcriptCalls(td *taskdir.Dir) ([]guard.Call, bool) {
	f, err := td.OpenRead(taskdir.Session)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxGuardTranscript))
	sc.Buffer(make([]byte, 0, 16<<10), 256<<20)
	var cs callSet
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if !mayBeToolRecord(line) {
			continue
		}
		var r session.Record
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		cs.add(r)
	}
	if sc.Err() != nil {
		return nil, false
	}
	return cs.calls, true
}

// mayBeToolRecord is false for a line that cannot decode to a record of
// type tool_call or tool_result: the type's value must then hold one of
// the two names as they are, or spelt with a \u escape (no other JSON
// escape makes a letter or '_').
func mayBeToolRecord(line []byte) bool {
	return bytes.Contains(line, []byte(session.RecToolCall)) || bytes.Contains(line, []byte(session.RecToolResult)) ||
		bytes.Contains(line, []byte(`\u`))
}

// callInput is the command and file path of a tool input.
func callInput(raw json.RawMessage) (command, path string) { return protocol.CallInput(raw) }

// parentAdvice is the advice for a refused call of a child's that the
// parent computes itself, from the child's permissions as its envelope
// gives them (the rules the child's own check ran), never from the words
// its transcript records: a child can write any refusal there, advice to
// grant Bash(*) included (review43 P1-1).
func parentAdvice(env *dispatch.Envelope) func(guard.Call) string {
	// Built at the first refused call only: most children have none, and
	// every child's judgement is on the spawn path.
	rules := sync.OnceValues(func() (*tool.Permissions, error) {
		return call.Permissions(env.Permissions, AlwaysAllowed())
	})
	return func(c guard.Call) string {
		perms, err := rules()
		if err != nil {
			return ""
		}
		in := map[string]string{}
		switch {
		case c.Command != "":
			in["command"] = c.Command
		case c.Path != "":
			in["file_path"] = c.Path
		}
		raw, _ := json.Marshal(in)
		return tool.RefusalAdvice(perms.Check(c.Tool, raw, env.Workspace), env.Workspace)
	}
}

// lineSegments are a Bash line's commands as the guardrails read them
// (trust.LineCommands).
func lineSegments(cmd string) ([]guard.Segment, bool) {
	lc, ok := trust.LineCommands(cmd)
	segs := make([]guard.Segment, len(lc))
	for i, c := range lc {
		segs[i] = guard.Segment{Words: c.Words, Source: c.Source, Writes: c.Writes, Background: c.Background, Hidden: c.Hidden, Pipe: c.Pipe, Detaches: c.Detaches}
	}
	return segs, ok
}

// pinVenvs are the workspace's venv activate scripts before its child
// runs (trust.PinVenvs), less any the repository tracks: those are the
// repository's, which may define `go` (redteam20 P2-2). It runs git only
// when there is a venv to ask about.
func pinVenvs(ctx context.Context, workspace string) trust.VenvPins {
	pins := trust.PinVenvs(workspace)
	if len(pins) == 0 {
		return pins
	}
	rels := make([]string, 0, len(pins))
	for r := range pins {
		rels = append(rels, r)
	}
	out, err := gitx.In(workspace).Run(ctx, append([]string{"ls-files", "-z", "--"}, rels...)...)
	if err != nil {
		var gerr *gitx.Error
		if !errors.As(err, &gerr) || !strings.Contains(gerr.Error(), "not a git repository") {
			return nil // cannot tell: trust none
		}
		return pins
	}
	pins.Drop(strings.Split(strings.TrimRight(out, "\x00"), "\x00"))
	return pins
}
