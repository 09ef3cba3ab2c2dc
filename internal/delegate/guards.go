package delegate

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/guard"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/tool"
)

// maxGuardTranscript bounds how much of a child's transcript the guards
// read: the file is the child's, and its size is the child's choice.
const maxGuardTranscript = 32 << 20

// concerns runs the edge guardrails over a child's return. What the child
// may write comes from the parent's registry, never from its records; the
// tool calls come from its transcript, which only ever adds concerns.
func (d *Dispatcher) concerns(name string, td *taskdir.Dir, env *dispatch.Envelope, res *dispatch.Result, want dispatch.Expect) []string {
	in := guard.Input{
		Status: res.Status, Summary: res.Summary, Sections: guard.DefaultSections(),
		Workspace: env.Workspace, Calls: transcriptCalls(td),
		Programs: func(cmd string) []string {
			return strings.Split(strings.TrimPrefix(tool.Intent("Bash", bashInput(cmd)), "Bash "), " && ")
		},
		TestCommands: d.cfg.Settings.TestCommands,
	}
	if want.Observed {
		in.Changed, in.Observed = want.Changed, true
	} else {
		in.Changed = res.FilesChanged
	}
	if def, ok := d.cfg.Registry.Get(name); ok {
		in.WriteScope = writeScope(def.ToolRules)
		if len(def.Sections) > 0 {
			in.Sections = def.Sections
		}
	}
	var out []string
	for _, c := range guard.Check(in) {
		out = append(out, c.String())
	}
	return out
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

// transcriptCalls reads the tool calls and their results from a child's
// transcript, through the task directory's beneath-resolution like every
// other read of a child-writable file (no link followed, a regular file
// only, never blocking on a FIFO), and no more than maxGuardTranscript.
func transcriptCalls(td *taskdir.Dir) []guard.Call {
	f, err := td.OpenRead(taskdir.Session)
	if err != nil {
		return nil
	}
	defer f.Close()
	recs, _, _ := session.Read(io.LimitReader(f, maxGuardTranscript))
	byID := map[string]int{}
	var calls []guard.Call
	for _, r := range recs {
		switch r.Type {
		case session.RecToolCall:
			byID[r.ToolID] = len(calls)
			c := guard.Call{Tool: tool.CanonicalName(r.Tool)}
			c.Command, c.Path = callInput(r.Input)
			calls = append(calls, c)
		case session.RecToolResult:
			if i, ok := byID[r.ToolID]; ok {
				calls[i].Result, calls[i].IsError = r.Output, r.IsError
				if len(r.Input) > 0 {
					// A hook replaced the model's input: this is what ran.
					calls[i].Command, calls[i].Path = callInput(r.Input)
				}
			}
		}
	}
	return calls
}

// callInput is the command and file path of a tool input.
func callInput(raw json.RawMessage) (command, path string) {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(raw, &in)
	return in.Command, in.FilePath
}
