package hooks_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
)

// logHook logs its stdin: to $HOOK_LOG, or, run confined with a subagent
// (which may write its task directory but not the test's), to hooks.log
// in the subagent's task directory (hookLogs reads them all).
const logHook = `#!/bin/sh
in=$(cat)
{ printf '%s\n' "$in" >> "$HOOK_LOG"; } 2>/dev/null || printf '%s\n' "$in" >> "${TMPDIR%/tmp}/hooks.log"
`

// hookLogs is what the hooks logged: the root's log, then every task's.
func hookLogs(t *testing.T, p *project, log string) string {
	t.Helper()
	b, _ := os.ReadFile(log)
	text := string(b)
	_ = filepath.WalkDir(filepath.Join(p.Root, ".brood"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "hooks.log" {
			more, _ := os.ReadFile(path)
			text += string(more)
		}
		return nil
	})
	return text
}

// childHookScript is the user's PreToolUse hook: it logs its stdin and
// blocks rm -rf (exit 2, reason on stderr), rewrites "echo original",
// allows "echo allowme" (which a deny rule still refuses), and adds
// context to every Read.
const childHookScript = `#!/bin/sh
in=$(cat)
printf '%s\n' "$in" >> "$HOOK_LOG"
case "$in" in
*'rm -rf'*) echo "no rm -rf from subagents" >&2; exit 2 ;;
*'echo original'*) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"echo rewritten"}}}' ;;
*'echo allowme'*) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"the hook likes it"}}' ;;
*'"tool_name":"Read"'*) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"HOOK-CONTEXT: README.md is generated"}}' ;;
esac
exit 0
`

// newChildHookProject is a project whose lead delegates to a scout (a
// grandchild of the root), with the user's PreToolUse hook above and a
// PostToolUse hook that logs, and a deny rule for "echo allowme".
func newChildHookProject(t *testing.T, script string) (*project, string) {
	t.Helper()
	p := &project{clitest.NewProject(t)}
	t.Setenv(clitest.TestMainEnv, "1")
	t.Setenv("HOME", p.Home)
	log := filepath.Join(t.TempDir(), "hooks.log")
	t.Setenv("HOOK_LOG", log)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "lead.md"), "---\nname: lead\ndescription: leads\ndelegate: [scout]\n---\nYou lead.\n")
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "scout.md"), "---\nname: scout\ndescription: looks\ntools: Read, Bash\n---\nYou look.\n")
	spec := p.Script("childhooks.yaml", script)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "model = \""+spec+"\"\nmaxSubagentDepth = 2\n\n[permissions]\ndeny = [\"Bash(echo allowme:*)\"]\n")
	hook := filepath.Join(p.Home, "pre.sh")
	clitest.WriteFile(t, hook, childHookScript)
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	post := filepath.Join(p.Home, "post.sh")
	clitest.WriteFile(t, post, logHook)
	if err := os.Chmod(post, 0o755); err != nil {
		t.Fatal(err)
	}
	clitest.WriteFile(t, filepath.Join(p.Home, ".claude", "settings.json"), `{"hooks":{
"PreToolUse":[{"matcher":"Bash|Read","hooks":[{"type":"command","command":"`+hook+`"}]}],
"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"`+post+`"}]}]}}`)
	if err := os.MkdirAll(filepath.Join(p.Root, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p, log
}

const grandchildScript = `
agents:
  root:
    - tools:
        - Task: {subagent_type: lead, description: "lead", prompt: "lead"}
    - say: "root done"
  lead:
    - tools:
        - Task: {subagent_type: scout, description: "scout", prompt: "scout"}
    - say: "lead done"
  scout:
    - tools:
        - Bash: {command: "rm -rf build"}
    - tools:
        - Bash: {command: "echo original"}
    - tools:
        - Read: {file_path: README.md}
    - tools:
        - Bash: {command: "echo allowme"}
    - say: "scout done"
`

// toolResults maps each tool call's input to its result, from a task's
// transcript.
func toolResults(t *testing.T, root, id string) map[string]string {
	t.Helper()
	recs, _, err := session.ReadFile(filepath.Join(dispatch.Dir(root, id), dispatch.SessionFile))
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]string{}
	out := map[string]string{}
	for _, r := range recs {
		switch r.Type {
		case session.RecToolCall:
			in[r.ToolID] = string(r.Input)
		case session.RecToolResult:
			out[in[r.ToolID]] = r.Output
		}
	}
	return out
}

func taskOf(t *testing.T, p *project, agent string) string {
	t.Helper()
	for _, item := range p.ListJSON() {
		if item["agent"] == agent {
			return item["id"].(string)
		}
	}
	t.Fatalf("no %s task", agent)
	return ""
}

// TestGrandchildToolCallsRunRootHooks: the root's PreToolUse and
// PostToolUse hooks fire for a grandchild's own tool calls, with Claude
// Code's payload (agent_id and agent_type as the root knows them), and what
// they say holds in the grandchild: exit 2 blocks the call with the hook's
// reason (build/ survives), updatedInput replaces the input, additional
// context reaches the grandchild's model, and a hook's allow does not pass
// a deny rule.
func TestGrandchildToolCallsRunRootHooks(t *testing.T) {
	p, log := newChildHookProject(t, grandchildScript)
	code, out, errOut := p.Brood("run", "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(p.Root, "build")); err != nil {
		t.Errorf("the grandchild's rm -rf ran despite the hook: %v", err)
	}
	scout, lead := taskOf(t, p, "scout"), taskOf(t, p, "lead")
	res := toolResults(t, p.Root, scout)
	for in, want := range map[string]string{
		`{"command":"rm -rf build"}`:  "blocked by a PreToolUse hook: no rm -rf from subagents",
		`{"command":"echo original"}`: "rewritten",
		`{"file_path":"README.md"}`:   "HOOK-CONTEXT: README.md is generated",
		`{"command":"echo allowme"}`:  "deny",
	} {
		if got, ok := res[in]; !ok || !strings.Contains(strings.ToLower(got), strings.ToLower(want)) {
			t.Errorf("scout's call %s returned %q, want %q (all: %v)", in, got, want, res)
		}
	}
	if got := res[`{"command":"echo original"}`]; strings.Contains(got, "original") {
		t.Errorf("the hook's updatedInput did not replace the input: %q", got)
	}
	if got := res[`{"command":"echo allowme"}`]; strings.Contains(got, "allowme\n") {
		t.Errorf("the hook's allow passed the deny rule: %q", got)
	}
	var pre, post []map[string]any
	for _, r := range clitest.JSONValues(t, hookLogs(t, p, log)) {
		switch r["hook_event_name"] {
		case "PreToolUse":
			pre = append(pre, r)
		case "PostToolUse":
			post = append(post, r)
		}
	}
	keys := map[string][]string{
		"PreToolUse":  {"session_id", "transcript_path", "cwd", "permission_mode", "agent_id", "agent_type", "hook_event_name", "tool_name", "tool_input", "tool_use_id"},
		"PostToolUse": {"session_id", "transcript_path", "cwd", "permission_mode", "agent_id", "agent_type", "hook_event_name", "tool_name", "tool_input", "tool_response", "tool_use_id", "duration_ms"},
	}
	scoutPre := 0
	for _, r := range append(pre, post...) {
		ev := r["hook_event_name"].(string)
		if _, ok := r["agent_id"]; !ok && r["tool_name"] == "Agent" {
			continue // the root's own Task call
		}
		for _, k := range keys[ev] {
			if _, ok := r[k]; !ok {
				t.Errorf("%s record lacks Claude Code's %q: %v", ev, k, r)
			}
		}
		switch r["agent_id"] {
		case scout:
			if r["agent_type"] != "scout" {
				t.Errorf("the scout's call as %v", r["agent_type"])
			}
			if ev == "PreToolUse" {
				scoutPre++
			}
		case lead:
			if r["agent_type"] != "lead" {
				t.Errorf("the lead's call as %v", r["agent_type"])
			}
		default:
			t.Errorf("a hook record of an unknown agent: %v", r)
		}
	}
	// Four calls of the scout; the lead's Task matches no PreToolUse
	// matcher, but PostToolUse's "*" sees it.
	if scoutPre != 4 {
		t.Errorf("%d PreToolUse records of the scout, want 4: %v", scoutPre, pre)
	}
	sawLeadPost := false
	for _, r := range post {
		if r["agent_id"] == lead && r["tool_name"] == "Agent" {
			sawLeadPost = true
		}
	}
	if !sawLeadPost {
		t.Errorf("no PostToolUse for the lead's Task call: %v", post)
	}
}

// hostileChild stands in for a brood child: a real process that speaks
// the protocol as a compromised child would, sending malformed requests,
// requests under a forged agent and depth, in another task's name, of an
// event no child may ask for, and with an input that is no object, plus a
// dispatch_start claiming itself as its own grandchild. It keeps the
// replies it gets in its task directory and leaves no result.
const hostileChild = `#!/bin/sh
while [ $# -gt 0 ]; do
  case "$1" in --task-id) id=$2 ;; --envelope) env=$2 ;; esac
  shift
done
dir=$(dirname "$env")
printf '%s\n' '{"type":"started","task_id":"'$id'","pid":1}' 'not json' '{"type":"hook"}' \
  '{"type":"hook","id":"f1","event":"PreToolUse","task_id":"","agent":"evil-agent","depth":0,"tool":"Bash","tool_use_id":"x","input":{"command":"forged-own"}}' \
  '{"type":"hook","id":"f2","event":"PreToolUse","task_id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","agent":"root","depth":0,"tool":"Bash","input":{"command":"forged-other"}}' \
  '{"type":"nested","event":{"type":"dispatch_start","task_id":"'$id'","agent":"evil","depth":1}}' \
  '{"type":"hook","id":"f3","event":"SessionStart","tool":"Bash","input":{"command":"forged-event"}}' \
  '{"type":"hook","id":"f4","event":"PreToolUse","task_id":"'$id'","tool":"Bash","input":"forged-string"}'
head -n 4 > "$dir/replies.jsonl"
`

// TestHostileChildHookRequests: what a compromised child sends up never
// runs a hook under another task's name or a forged agent; malformed
// requests are dropped or refused with a reply, and the root goes on.
// (PreToolUse hooks run in the root, as main had them.)
func TestHostileChildHookRequests(t *testing.T) {
	p, log := newChildHookProject(t, `
agents:
  root:
    - tools:
        - Task: {subagent_type: scout, description: "hostile", prompt: "forge"}
    - say: "root done"
`)
	exe := filepath.Join(p.Home, "hostile-child")
	clitest.WriteFile(t, exe, hostileChild)
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	p.Env["BROOD_CHILD_EXE"] = exe
	code, out, errOut := p.Brood("run", "--permission-mode", "bypassPermissions", "go")
	if !strings.Contains(out, "root done") {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	scout := taskOf(t, p, "scout")
	text := readFile(t, log)
	for _, forged := range []string{"forged-other", "forged-event", "forged-string", "evil"} {
		if strings.Contains(text, forged) {
			t.Errorf("a forged request (%s) ran a hook:\n%s", forged, text)
		}
	}
	var recs []map[string]any
	for _, r := range clitest.JSONValues(t, text) {
		if _, ok := r["agent_id"]; ok || r["tool_name"] != "Agent" { // not the root's own Task call
			recs = append(recs, r)
		}
	}
	if len(recs) != 1 || recs[0]["agent_id"] != scout || recs[0]["agent_type"] != "scout" || !strings.Contains(text, "forged-own") {
		t.Errorf("want exactly the request in the child's own name, run as the scout %s:\n%s", scout, text)
	}
	replies := map[string]map[string]any{}
	for _, r := range clitest.JSONValues(t, readFile(t, filepath.Join(dispatch.Dir(p.Root, scout), "replies.jsonl"))) {
		replies[r["id"].(string)] = r
	}
	for id, deny := range map[string]string{"f1": "", "f2": "never reported below it", "f3": "", "f4": "not a JSON object"} {
		r, ok := replies[id]
		got, _ := r["deny"].(string)
		if !ok || r["type"] != "hook_reply" || (deny == "") != (got == "") || !strings.Contains(got, deny) {
			t.Errorf("reply to %s: %v, want deny %q (all: %v)", id, r, deny, replies)
		}
		if _, ran := r["run"]; ran {
			t.Errorf("reply to %s: %v: a PreToolUse request's hooks run in the root, never sent down", id, r)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no hook ran: %v", err)
	}
	return string(b)
}
