package run

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/tool"
)

// promptTool is --permission-prompt-tool: an MCP tool of the run that
// decides, in place of a person, the calls the rules neither allow nor
// deny. It is called as Claude Code calls it, with {tool_name, input,
// tool_use_id}, and its text answer is Claude Code's JSON:
// {"behavior":"allow","updatedInput":{...}} or {"behavior":"deny",
// "message":"..."}. Anything else is a denial.
type promptTool struct {
	name  string
	tools *tool.Set // the root's tools, set once the run is assembled
	env   *tool.Env // the root's Env, without Prompt
}

// stdioPromptTool is the Agent SDK's --permission-prompt-tool value (its
// control protocol on stdin/stdout), which brood does not speak.
const stdioPromptTool = "stdio"

// stdioNote is said for --permission-prompt-tool stdio.
const stdioNote = "brood: --permission-prompt-tool stdio: accepted; the Agent SDK's control protocol is not supported: calls that need approval follow the permission mode, as without the flag"

// bindRun binds the prompt tool for a run: among the root's tools, or,
// when --tools names the built-ins the model is offered (allTools false:
// the configured MCP servers' tools are not offered), among the connected
// MCP servers' tools, since --tools limits the built-in tools only, as
// Claude Code's. The returned func closes what it connected.
func (p *promptTool) bindRun(ctx context.Context, f *cmdutil.Factory, tools *tool.Set, env *tool.Env, allTools bool) (func(), error) {
	if p.name == "" || allTools {
		return func() {}, p.bind(tools, env)
	}
	servers := f.MCPSession(ctx, "")
	if err := p.bind(tool.NewSet(servers.Tools()...), env); err != nil {
		servers.Close()
		return nil, err
	}
	return func() { servers.Close() }, nil
}

// bind finds the prompt tool among the root's tools; a name no tool has
// stops the run (exit 1), naming the MCP tools there are.
func (p *promptTool) bind(tools *tool.Set, env *tool.Env) error {
	if p.name == "" {
		return nil
	}
	if _, ok := tools.Get(p.name); !ok {
		var mcp []string
		for _, n := range tools.Names() {
			if strings.HasPrefix(n, "mcp__") {
				mcp = append(mcp, n)
			}
		}
		slices.Sort(mcp)
		have := "none: add its server with --mcp-config or .mcp.json"
		if len(mcp) > 0 {
			have = strings.Join(mcp, ", ")
		}
		return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("--permission-prompt-tool %s: no such MCP tool; the run's MCP tools are %s", p.name, have))
	}
	e := *env
	e.Prompt, e.Call = nil, nil
	p.tools, p.env = tools, &e
	return nil
}

// decide is the root's tool.PromptFunc.
func (p *promptTool) decide(ctx context.Context, toolName string, input json.RawMessage, toolUseID string) (tool.PromptAnswer, error) {
	if toolName == "Task" {
		toolName = "Agent" // Claude Code's name, as stream-json has it
	}
	payload, err := json.Marshal(struct {
		ToolName  string          `json:"tool_name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
	}{toolName, input, toolUseID})
	if err != nil {
		return tool.PromptAnswer{}, err
	}
	t, _ := p.tools.Get(p.name)
	res := t.Run(ctx, p.env, payload)
	if res.IsError {
		return tool.PromptAnswer{}, fmt.Errorf("%s: %s", p.name, cmdutil.FirstLine(res.Content, 300))
	}
	var ans struct {
		Behavior     string          `json:"behavior"`
		UpdatedInput json.RawMessage `json:"updatedInput"`
		Message      string          `json:"message"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(res.Content)), &ans); err != nil {
		return tool.PromptAnswer{}, fmt.Errorf("%s answered %q, not {\"behavior\":\"allow\"|\"deny\",...}", p.name, cmdutil.FirstLine(res.Content, 200))
	}
	switch ans.Behavior {
	case "allow":
		if string(ans.UpdatedInput) == "null" {
			ans.UpdatedInput = nil
		}
		return tool.PromptAnswer{Allow: true, Input: ans.UpdatedInput}, nil
	case "deny":
		return tool.PromptAnswer{Message: ans.Message}, nil
	}
	return tool.PromptAnswer{}, fmt.Errorf("%s answered behavior %q, not allow or deny", p.name, ans.Behavior)
}

// childAsk puts a subagent's question to the prompt tool. A child's
// question carries its tool and what it acts on, not its whole input, and
// its answer is allow or deny: the prompt tool gets {tool_name, input,
// tool_use_id: ""} with the subject under the tool's own field
// (tool.SubjectField: command for Bash, file_path for Read, Write and
// Edit, path for Glob, Grep and LS, url for WebFetch, whose question is
// its domain:HOST, subagent_type for Agent; "subject" for a tool with no
// such field), and an allow whose updatedInput changes that input is a
// denial (the child cannot run the changed call, and must not run the
// unchanged one).
func (p *promptTool) childAsk(ctx context.Context, a spawn.Ask) spawn.Answer {
	key := cmp.Or(tool.SubjectField(a.Tool), "subject")
	in := map[string]string{}
	if a.Subject != "" {
		in[key] = a.Subject
	}
	input, _ := json.Marshal(in)
	ans, err := p.decide(ctx, a.Tool, input, "")
	if err != nil || !ans.Allow {
		return spawn.Answer{}
	}
	if len(ans.Input) > 0 {
		var got map[string]string
		if json.Unmarshal(ans.Input, &got) != nil || !maps.Equal(got, in) {
			return spawn.Answer{}
		}
	}
	return spawn.Answer{Allow: true}
}
