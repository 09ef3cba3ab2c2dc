package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/trust"
)

// maxTimeoutMS bounds a command's timeout as the wire gives it (a day).
const maxTimeoutMS = 24 * 3600 * 1000

// Here is where a child runs the hooks of its own tool calls (RunHere):
// its own place and launcher, never the root's.
type Here struct {
	// Dir is the child's working directory (its copy, for an isolated
	// child): the hooks' cwd and the payload's "cwd".
	Dir string
	// ProjectDir is the project root as the child sees it (the top of its
	// copy): CLAUDE_PROJECT_DIR and BROOD_PROJECT_DIR, and where the
	// commands' pinned files are checked.
	ProjectDir string
	// Env is the hooks' base environment (the child's, as its Bash has it).
	Env []string
	// Start is the child's launcher of its tool processes (nil: a plain
	// start, for tests).
	Start Starter
	// Refuse, when set, is why no hook can run here (a read-only child
	// whose sandbox cannot keep a command read-only): every command is
	// refused (the root sends a child only PostToolUse hooks to run).
	Refuse string
	// Report receives one line per failed hook and per systemMessage.
	Report io.Writer
}

// RunHere runs the hooks the root chose for one of this child's tool
// calls (protocol.HookRun) where the call ran: cwd h.Dir, inside this
// process's confinement (h.Start), each command only while the files it
// runs are, in this child's view, as the root trusted them. It returns
// what they decided, as the root's own hooks would have, and the commands
// that failed (for the root to say: Hook.Failed).
func RunHere(ctx context.Context, run *protocol.HookRun, h Here) (protocol.HookReply, []protocol.HookFailure) {
	if run == nil || len(run.Commands) == 0 {
		return protocol.HookReply{}, nil
	}
	event := run.Event
	if event != PreToolUse && event != PostToolUse {
		return protocol.HookReply{}, nil
	}
	payload, err := withCwd(run.Payload, h.Dir)
	if err != nil {
		report(h.Report, Result{Failures: []string{fmt.Sprintf("%s: the payload from the root is not a JSON object: %v", event, err)}})
		return refused(event, "the hook request's reply could not be read"), nil
	}
	env := append(append([]string{}, h.Env...), "CLAUDE_PROJECT_DIR="+h.ProjectDir, "BROOD_PROJECT_DIR="+h.ProjectDir)
	cmds := make([]Command, len(run.Commands))
	for i, c := range run.Commands {
		cmds[i] = Command{Type: "command", Command: c.Command, pins: localPins(h.ProjectDir, c.Pins),
			Timeout: time.Duration(min(max(c.TimeoutMS, 0), maxTimeoutMS) * int64(time.Millisecond)).Seconds()}
	}
	check := func(c Command) error {
		if h.Refuse != "" {
			return errors.New(h.Refuse)
		}
		return trust.CheckPins(c.pins)
	}
	res := fireAll(ctx, event, cmds, check, func(ctx context.Context, c Command) ran {
		return runCommand(ctx, c, h.Dir, env, payload, h.Start)
	})
	report(h.Report, res)
	if event == PreToolUse {
		g := gateOf(res)
		return protocol.HookReply{Deny: g.Deny, Verdict: g.Verdict, Input: g.Input, Context: g.Context}, res.failed
	}
	return protocol.HookReply{Context: afterContext(res)}, res.failed
}

// refused is the reply when the hooks cannot be run at all: a PreToolUse
// call does not go through.
func refused(event, why string) protocol.HookReply {
	if event == PreToolUse {
		return protocol.HookReply{Deny: "denied: a PreToolUse hook could not run: " + why}
	}
	return protocol.HookReply{}
}

// withCwd is payload with its "cwd" set to dir.
func withCwd(payload json.RawMessage, dir string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(payload, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("null")
	}
	cwd, err := json.Marshal(dir)
	if err != nil {
		return nil, err
	}
	m["cwd"] = cwd
	return json.Marshal(m)
}

// relPins are pins as the wire carries them: project-relative where they
// are under the project root.
func (r *Runner) relPins(pins []trust.Pin) []protocol.HookPin {
	var out []protocol.HookPin
	for _, p := range pins {
		path := p.Path
		if rel, err := filepath.Rel(r.opt.ProjectDir, p.Path); err == nil && filepath.IsLocal(rel) && r.opt.ProjectDir != "" {
			path = filepath.ToSlash(rel)
		}
		out = append(out, protocol.HookPin{Path: path, Sum: p.Sum})
	}
	return out
}

// localPins are wire pins in this child's view: a relative path is under
// its project root (the top of its copy).
func localPins(projectDir string, pins []protocol.HookPin) []trust.Pin {
	out := make([]trust.Pin, 0, len(pins))
	for _, p := range pins {
		path := filepath.FromSlash(p.Path)
		if !filepath.IsAbs(path) {
			if !filepath.IsLocal(path) {
				// Never outside the project: such a pin cannot hold.
				out = append(out, trust.Pin{Path: filepath.Join(projectDir, ".brood-invalid-pin"), Sum: "invalid"})
				continue
			}
			path = filepath.Join(projectDir, path)
		}
		out = append(out, trust.Pin{Path: path, Sum: p.Sum})
	}
	return out
}

// report says res's failures and messages on the user's terminal, each
// line of them a "· hook:" line without control characters: a hook's
// systemMessage or stderr may carry what a subagent put in its tool input,
// and a child's words are not escape sequences for the terminal.
func report(w io.Writer, res Result) {
	if w == nil {
		return
	}
	for _, text := range slices.Concat(res.Failures, res.Messages) {
		for line := range strings.Lines(text) {
			if line = printable(line); strings.TrimSpace(line) != "" {
				fmt.Fprintln(w, "· hook:", line)
			}
		}
	}
}
