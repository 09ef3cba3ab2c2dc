package tool

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"
)

// PromptAnswer is a permission prompt tool's answer (Claude Code's
// --permission-prompt-tool): allow, with Input replacing the call's
// input when set (updatedInput), or deny with Message.
type PromptAnswer struct {
	Allow   bool
	Input   json.RawMessage
	Message string
}

// PromptFunc decides a call that needs approval, for a run with no person
// to ask: toolName, the call's input and its tool_use id ("" outside the
// agent loop). An error is a denial.
type PromptFunc func(ctx context.Context, toolName string, input json.RawMessage, toolUseID string) (PromptAnswer, error)

// prompted puts a call that needs approval to env.Prompt. It returns the
// input to run (the prompt's updatedInput, checked as the model's would
// be: the schema, the configuration guard, and the deny rules, which an
// answer never overrides), or the refusal. An updatedInput on another
// subject (command, file, URL...) than the one asked about is a call
// nobody approved: it runs only if the rules allow it as it is. A writing
// call's lock h moves to the file the updatedInput names before it is
// checked, so that the file checked is the file written.
func (s *Set) prompted(ctx context.Context, env *Env, t Tool, input json.RawMessage, h *held) (json.RawMessage, Result, bool) {
	spec := t.Spec()
	id := ""
	if env.Call != nil {
		id = env.Call.ID
	}
	ans, err := env.Prompt(ctx, spec.Name, input, id)
	switch {
	case err != nil:
		return nil, Errorf("permission denied: %s needs approval and the permission prompt tool failed: %v", spec.Name, err), true
	case !ans.Allow:
		msg := ans.Message
		if msg == "" {
			msg = "the permission prompt tool denied it"
		}
		return nil, Errorf("permission denied: %s: %s", spec.Name, msg), true
	}
	if len(ans.Input) == 0 {
		return input, Result{}, false
	}
	if msg := validateInput(spec.Name, spec.Schema, ans.Input); msg != "" {
		return nil, Errorf("permission denied: the permission prompt tool's updatedInput for %s is invalid: %s", spec.Name, msg), true
	}
	if !t.ReadOnly() {
		s.hold(h, filePathOf(ans.Input, env.Dir))
	}
	if r, refused := refuseConfig(env, t, ans.Input); refused {
		return nil, r, true
	}
	d := Decision{Verdict: Allow}
	if env.Perms != nil {
		d = env.Perms.check(CanonicalName(spec.Name), t.ReadOnly(), ans.Input, env.Dir)
	}
	if d.Verdict == Deny {
		return nil, Errorf("permission denied: the permission prompt tool's updatedInput for %s is refused (%s)", spec.Name, d.Reason), true
	}
	// The approver was asked about this call: one it turned into a call
	// on another subject that the rules would ask about is a call nobody
	// approved; so is one a PreToolUse hook asked about, which the hook
	// never saw.
	if (d.Verdict != Allow || hookAsked(env)) && subjectOf(spec.Name, ans.Input, env.Dir) != subjectOf(spec.Name, input, env.Dir) {
		if d.Verdict == Allow {
			d.Reason = "a PreToolUse hook asked about the call as it was"
		}
		return nil, Errorf("permission denied: the permission prompt tool changed the %s call to one on another %s, which needs its own approval (%s); make that call if it is what you need", spec.Name, subjectNoun(spec.Name), d.Reason), true
	}
	if env.Call != nil && env.Call.Prompted != nil {
		*env.Call.Prompted = ans.Input // this call's own
	}
	return ans.Input, Result{}, false
}

// hookAsked reports whether a PreToolUse hook asked for approval of
// env's call.
func hookAsked(env *Env) bool { return env.Call != nil && env.Call.HookVerdict == HookAsk }

// subject is what a call acts on, as far as its approval goes: its
// command, file or search path (absolute), URL or subagent.
type subject struct{ command, path, url, agent string }

// subjectOf is input's subject as tool reads it. A built-in tool's is
// its own field (SubjectField) alone, a path made absolute against dir as
// the permission check makes it (pathSubject). For a tool whose input brood
// does not know (an MCP tool), every field that names a subject counts.
func subjectOf(tool string, input json.RawMessage, dir string) subject {
	tool = CanonicalName(tool)
	text := strings.TrimSpace(subjectText(tool, input))
	switch field := SubjectField(tool); {
	case subjectKind(tool) == subjectPath:
		return subject{path: pathSubject(tool, input, dir)}
	case field == "command":
		return subject{command: text}
	case field == "url":
		return subject{url: text}
	case field == "subagent_type":
		return subject{agent: subjectText(tool, input)}
	}
	var in struct {
		Command      string `json:"command"`
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
		Path         string `json:"path"`
		URL          string `json:"url"`
		SubagentType string `json:"subagent_type"`
	}
	_ = json.Unmarshal(input, &in)
	sub := subject{command: strings.TrimSpace(in.Command), url: strings.TrimSpace(in.URL), agent: in.SubagentType}
	if p := cmp.Or(in.FilePath, in.NotebookPath, in.Path); p != "" {
		sub.path = resolvePath(dir, p)
	}
	return sub
}

// subjectNoun names what a tool's subject is, for a message.
func subjectNoun(tool string) string {
	switch SubjectField(tool) {
	case "command":
		return "command"
	case "url":
		return "URL"
	case "subagent_type":
		return "subagent"
	case "":
		return "subject"
	}
	return "path"
}

// SubjectField is the input field in which tool names what a call acts
// on, the subject permission rules match ("command", "file_path",
// "notebook_path", "path", "url", "subagent_type"); "" for a tool with
// none (an MCP tool, WebSearch).
func SubjectField(tool string) string {
	switch tool = CanonicalName(tool); tool {
	case "Bash":
		return "command"
	case "Read", "Write", "Edit", "MultiEdit":
		return "file_path"
	case "NotebookEdit":
		return "notebook_path"
	case "Glob", "Grep", "LS":
		return "path"
	case "WebFetch":
		return "url"
	case "Task", "Agent":
		return "subagent_type"
	}
	return ""
}
