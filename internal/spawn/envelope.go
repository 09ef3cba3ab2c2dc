package spawn

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/guard"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/textline"
)

// delegationTools are the tools that only exist below the depth cap.
var delegationTools = []string{"Task", "TaskOutput", "SendMessage"}

// AlwaysAllowed are permission rules every agent that has the delegation
// tools runs with: calling them writes nothing itself (each child runs under
// its own rules), so they never need a human's approval.
func AlwaysAllowed() []string { return slices.Clone(delegationTools) }

func isDelegationTool(name string) bool {
	return slices.ContainsFunc(delegationTools, func(t string) bool { return strings.EqualFold(t, name) })
}

// envelope builds the handoff for one dispatch.
func (d *Dispatcher) envelope(id string, def *registry.Definition, req call.Spec) *dispatch.Envelope {
	s := d.cfg.Settings
	depth := d.cfg.Depth + 1
	tools := d.childTools(def, depth)
	var allowed []string
	if def.Delegate && depth < d.cfg.MaxDepth {
		allowed = []string{"*"}
		if def.DelegateAllow != nil {
			allowed = slices.Clone(def.DelegateAllow)
		}
	}
	timeout, maxTurns, runNote := d.childRunLimits(def)
	defModel, modelTrust := d.trustedModel(def)
	modelSpec, modelNote := childModel(defModel, d.cfg.ParentModel, d.childGetenv)
	perms := d.cfg.Permissions
	var modeNote string
	perms.Mode, modeNote = childMode(d.trustedMode(def), perms.Mode)
	perms.Allow = slices.Clone(perms.Allow)
	rulesNote := d.agentToolRules(def, &perms)
	perms.Deny = append(slices.Clone(perms.Deny), def.DenyRules...)
	isolation := "" // decided by chooseIsolation once the envelope is built
	readOnly := def.ReadOnly || readOnlyTools(tools)
	servers, mcpNotes := d.childMCP(def)
	envAllow, envNote := d.childEnvAllow(def, withMCPRefs(def.Env, servers))
	lim, limNote := d.childLimits(def)
	return &dispatch.Envelope{
		MCP:     servers,
		Trust:   d.cfg.Grant,
		Version: 1, TaskID: id, ParentTaskID: d.cfg.ParentTaskID,
		SourceAgent:         d.cfg.SourceAgent,
		TargetAgent:         def.Name,
		HandoffReason:       req.Description,
		AllowedDestinations: nonNil(allowed),
		HistoryPolicy:       "fresh: the child sees only its system prompt and this brief, none of the parent's conversation",
		ExpectedReturn:      "result.json with status done|partial|checkpoint|failed, a summary (what I did, what I found, files changed, problems), files_changed, evidence",
		Prompt:              req.Prompt,
		Brief:               req.Prompt,
		Context:             req.Context,
		ResumePointer:       "session.jsonl from its start (first run; a resume continues it, its transcript intact)",
		System:              childSystem(def, d.inheritedSystem(), d.childProjectFiles(readOnly), req, workspaceBlock(d.cfg.Workspace, d.cfg.AddDirs), tools),
		AddDirs:             d.cfg.AddDirs,
		ProjectFiles:        d.cfg.ProjectFiles,
		Workspace:           d.cfg.Workspace,
		ProjectRoot:         d.cfg.ProjectRoot,
		Tools:               tools,
		Permissions:         perms,
		ReadOnly:            readOnly,
		Isolation:           isolation,
		Network:             childNetwork(def, readOnly),
		UnixSockets:         s.Sandbox.UnixSockets,
		Limits:              lim,
		Env:                 envAllow,
		Model:               modelSpec,
		Effort:              cmp.Or(def.Effort, s.Effort),
		MaxTurns:            maxTurns,
		MaxTokens:           s.MaxTokens,
		TokenBudget:         s.TokenBudget,
		Depth:               depth,
		MaxDepth:            d.cfg.MaxDepth,
		TimeoutMS:           timeout.Milliseconds(),
		PingMS:              s.Pool.PingInterval.Duration.Milliseconds(),
		Background:          def.Background,
		InlineLimit:         s.Results.InlineLimit,
		Concurrency:         s.Pool.NestedConcurrency,
		Created:             time.Now().UTC(),
		BashTimeout:         s.Bash.Timeout.Duration.Milliseconds(),
		OutputLimit:         s.Bash.OutputLimit,
		ForceWorktree:       s.Isolation.ForceWorktree,
		FixAttempts:         s.FixAttempts,
		Notes:               append(nonEmpty(modelTrust, modelNote, d.modeTrustNote(def), modeNote, rulesNote, envNote, limNote, runNote), mcpNotes...),
		NoLandlock:          s.Isolation.NoLandlock,
		// The root's --setting-sources, for a child that reads settings.
		SettingSources: d.cfg.SettingSources,
	}
}

// childModel is the model a child runs: its definition's, or its parent's.
// Claude Code's aliases (sonnet, opus, haiku), which most published agent
// files carry, mean "a Claude model": under a parent that runs another
// provider (a local server, the scripted model) they are read as inherit,
// so a child never leaves for Anthropic unasked.
//
// getenv reads the children's environment (Config.Env: a settings env is
// there, not in this process's).
func childModel(defModel, parent string, getenv func(string) string) (string, string) {
	switch m := strings.ToLower(strings.TrimSpace(defModel)); {
	case m == "" || m == "inherit":
		return parent, ""
	case (m == "sonnet" || m == "opus" || m == "haiku") && !anthropicModel(parent):
		return parent, fmt.Sprintf("model: %s read as inherit: the parent runs %s, not an Anthropic model", m, parent)
	case strings.HasPrefix(m, "claude-") && !anthropicModel(parent) && getenv("ANTHROPIC_API_KEY") == "" && getenv("ANTHROPIC_AUTH_TOKEN") == "":
		// A full Claude model id (claude-sonnet-4-20250514, as whole
		// published collections pin) with no Anthropic credentials: it
		// could only fail, so it is read as the parent's model too.
		return parent, fmt.Sprintf("model: %s read as inherit: the parent runs %s and no Anthropic credentials are configured", defModel, parent)
	}
	return defModel, ""
}

// childGetenv is a variable of the children's base environment.
func (d *Dispatcher) childGetenv(name string) string {
	v := ""
	for _, kv := range d.cfg.Env {
		if val, ok := strings.CutPrefix(kv, name+"="); ok {
			v = val // the last one wins, as in exec
		}
	}
	return v
}

func anthropicModel(spec string) bool {
	s := strings.ToLower(spec)
	return strings.HasPrefix(s, "anthropic/") || strings.HasPrefix(s, "claude-") || s == "sonnet" || s == "opus" || s == "haiku"
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// childTools resolves what the child may call: its definition's list (or the
// parent's tools when it names none), less what it disallows; the delegation
// tools only when the definition delegates and the child is below the cap.
func (d *Dispatcher) childTools(def *registry.Definition, depth int) []string {
	var base []string
	if def.AllTools {
		base = slices.Clone(d.cfg.ParentTools)
	} else {
		base = slices.Clone(def.Tools)
	}
	out := base[:0]
	for _, t := range base {
		if isDelegationTool(t) {
			continue
		}
		if slices.ContainsFunc(def.DisallowedTools, func(x string) bool { return strings.EqualFold(x, t) }) {
			continue
		}
		out = append(out, t)
	}
	if def.Delegate && depth < d.cfg.MaxDepth {
		out = append(out, delegationTools...)
	}
	return nonNil(out)
}

func readOnlyTools(tools []string) bool {
	for _, t := range tools {
		switch strings.ToLower(t) {
		case "read", "glob", "grep", "ls", "taskoutput":
		default:
			return false
		}
	}
	return true
}

// childProjectFiles is the instruction-file block a child gets: the
// project's files for a writer (by default; see settings.ProjectFiles),
// none for a read-only agent.
func (d *Dispatcher) childProjectFiles(readOnly bool) string {
	if !d.cfg.Settings.ProjectFiles.ForChild(readOnly) {
		return ""
	}
	return d.cfg.ProjectFiles
}

// inheritedSystem is the parent's system prompt as a definition with an
// empty body inherits it: without the project's instruction files, which
// the child gets or not by its own right.
func (d *Dispatcher) inheritedSystem() string {
	if d.cfg.ParentProjectFiles == "" {
		return d.cfg.ParentSystem
	}
	return strings.Replace(d.cfg.ParentSystem, d.cfg.ParentProjectFiles, "", 1)
}

// childSystem is the child's system prompt: its definition's body (or the
// parent's prompt when the body is empty), the project's instruction files
// when it gets them, then the focused block.
func childSystem(def *registry.Definition, parentSystem, projectFiles string, req call.Spec, workspace string, tools []string) string {
	base := def.Prompt
	if strings.TrimSpace(base) == "" {
		base = parentSystem
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(base, "\n"))
	b.WriteString(projectFiles)
	fmt.Fprintf(&b, "\n\n---\nYou are a focused subagent (%s) working on one delegated task. No human is on the loop: you cannot ask questions, and anything that would need approval is denied.\n\n", def.Name)
	label := cmp.Or(req.Description, textline.Line(req.Prompt, 120))
	fmt.Fprintf(&b, "YOUR TASK (%s), the brief from the parent agent, who sees none of your work but your final answer:\n%s\n\n", label, req.Prompt)
	if c := strings.TrimSpace(req.Context); c != "" {
		fmt.Fprintf(&b, "CONTEXT (background from the parent agent, to inform the task above):\n%s\n\n", c)
	}
	if slices.Contains(tools, "Task") {
		b.WriteString("DELEGATION:\nWhen part of the task is a separable search or investigation, you may hand it to a subagent with the Task tool and a self-contained brief; do small things yourself.\n\n")
	}
	if len(def.Lacking) > 0 {
		fmt.Fprintf(&b, "TOOLS YOU DO NOT HAVE:\nYour definition names %s, which brood does not provide. Do the task with the tools you have; if it cannot be done without them, say so in your summary.\n\n", strings.Join(def.Lacking, ", "))
	}
	fmt.Fprintf(&b, "WORKSPACE PATH:\n%s\nUse this exact absolute path. Never assume /workspace or any path the task does not give.\n\n", workspace)
	sections := def.Sections
	if len(sections) == 0 {
		sections = guard.DefaultSections()
	}
	b.WriteString("When you finish, your last message is the only thing the parent sees. Write it as a summary with these sections:\n")
	for _, sec := range sections {
		b.WriteString("## " + sec + "\n")
	}
	b.WriteString("If you must stop for a human or a decision, write `## CHECKPOINT REACHED` with **Type:** (human-verify, decision or human-action), **Progress:** done/total, the completed tasks, the current task and what blocks it.")
	return b.String()
}

// workspaceBlock is the workspace path, with the directories --add-dir (or
// permissions.additionalDirectories) added, as the child's prompt names
// them.
func workspaceBlock(workspace string, addDirs []string) string {
	if len(addDirs) == 0 {
		return workspace
	}
	return workspace + "\nAdditional working directories (--add-dir): " + strings.Join(addDirs, ", ")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
