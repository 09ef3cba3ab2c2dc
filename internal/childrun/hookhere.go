package childrun

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/hooks"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/tool"
)

// hookPlace is where this child runs the hooks the root chose for its own
// tool calls (hooks.RunHere): in its workspace (its copy, for an isolated
// child), with the project root as it sees it, started by the launcher of
// its Bash commands (sandbox.StartCommandWith: its Landlock domain,
// syscall filter, cgroup and limits, no network under `network: none`
// and no unix sockets unless sandbox.unix_sockets), with
// its Bash's environment. A read-only child whose sandbox cannot keep a
// command from writing runs none (kernelHolds false).
func hookPlace(env *dispatch.Envelope, workspace string, kernelHolds bool) hooks.Here {
	noNetwork := env.Network != nil && !*env.Network
	h := hooks.Here{
		Dir: workspace, ProjectDir: projectView(env), Env: tool.WithoutProviderKeys(os.Environ()),
		Start: func(cmd *exec.Cmd) (func() error, error) {
			c, err := sandbox.StartCommandWith(cmd, sandbox.Walls{NoNetwork: noNetwork, NoUnixSockets: !env.UnixSockets})
			if err != nil {
				return nil, err
			}
			return c.Wait, nil
		},
		Report: os.Stderr,
	}
	if env.ReadOnly && !kernelHolds {
		h.Refuse = "this read-only subagent's sandbox cannot keep a hook from writing (no Landlock), so its hooks are not run"
	}
	return h
}

// projectView is the project root as this child sees it: for a worktree
// copy, the same place in the copy (the copy's top stands for the real
// tree's top, which the workspace and its copy share the offset below);
// otherwise (an overlay is mounted over the real paths; in place, the
// real tree) the project root itself.
func projectView(env *dispatch.Envelope) string {
	if env.IsolationRoot == "" || env.IsolationDir == "" || env.IsolationRoot == env.ProjectRoot {
		return env.ProjectRoot
	}
	below, err := filepath.Rel(env.IsolationRoot, env.IsolationDir)
	if err != nil || !filepath.IsLocal(below) {
		return env.IsolationRoot
	}
	top := env.Workspace
	if below != "." {
		top = strings.TrimSuffix(env.Workspace, string(filepath.Separator)+below)
		if top == env.Workspace {
			return env.IsolationRoot
		}
	}
	rel, err := filepath.Rel(top, env.ProjectRoot)
	if err != nil || !filepath.IsLocal(rel) {
		return env.IsolationRoot
	}
	return filepath.Join(env.IsolationRoot, rel)
}

// runHere runs the PostToolUse hooks of call the root chose in rep here,
// if it chose any, adds what they decided to rep, and sends up each
// command's first failure (for the root to say on the user's terminal).
func (c *childAgentHooks) runHere(ctx context.Context, call agent.ToolCall, rep protocol.HookReply) protocol.HookReply {
	if rep.Run == nil || rep.Run.Event != protocol.HookPostToolUse {
		rep.Run = nil
		return rep
	}
	here, failed := hooks.RunHere(ctx, rep.Run, c.here)
	rep.Run = nil
	c.sendFailures(ctx, call, failed)
	rep.Deny = cmp.Or(rep.Deny, here.Deny)
	if here.Verdict != "" && rep.Verdict != tool.HookAsk {
		rep.Verdict = here.Verdict
	}
	if len(here.Input) > 0 {
		rep.Input = here.Input
	}
	rep.Context = joinContext(rep.Context, here.Context)
	return rep
}

func joinContext(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// maxFailuresSent bounds the failures one child sends up.
const maxFailuresSent = 32

// sendFailures reports each failed hook command up once (the root says it
// on the user's terminal; the line is also in this child's stderr.log).
func (c *childAgentHooks) sendFailures(ctx context.Context, call agent.ToolCall, failed []protocol.HookFailure) {
	for _, f := range failed {
		c.mu.Lock()
		fresh := !c.sent[f.Command] && len(c.sent) < maxFailuresSent
		if fresh {
			if c.sent == nil {
				c.sent = map[string]bool{}
			}
			c.sent[f.Command] = true
		}
		c.mu.Unlock()
		if !fresh {
			continue
		}
		h := c.request(protocol.HookPostToolUse, agent.ToolCall{Name: call.Name, ID: call.ID, Input: json.RawMessage("{}")})
		h.Failed = &f
		c.l.hook(ctx, h)
	}
}
