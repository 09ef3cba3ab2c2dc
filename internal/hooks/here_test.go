package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/protocol"
)

// TestRunHere: the hooks the root chose run in the child's place (its
// directory as cwd and payload cwd, its project view as
// CLAUDE_PROJECT_DIR), only while their pinned files are as trusted in
// that view, and what they say is the reply the root would have sent.
func TestRunHere(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\nin=$(cat)\ncase \"$in\" in *'\"cwd\":\"'\"$PWD\"'\"'*) ;; *) echo \"payload cwd is not $PWD: $in\" >&2; exit 2 ;; esac\n" +
		"[ \"$CLAUDE_PROJECT_DIR\" = \"$PWD\" ] || { echo \"project $CLAUDE_PROJECT_DIR\" >&2; exit 2; }\n" +
		"printf '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"additionalContext\":\"ran here\"}}'\n"
	if err := os.WriteFile(filepath.Join(dir, "guard.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(script))
	good := []protocol.HookPin{{Path: "guard.sh", Sum: hex.EncodeToString(sum[:])}}
	payload := json.RawMessage(`{"session_id":"s","cwd":"/the/root","hook_event_name":"PreToolUse","tool_name":"Bash"}`)
	for _, tc := range []struct {
		name     string
		event    string
		pins     []protocol.HookPin
		refuse   string
		payload  json.RawMessage
		deny     string // "" none; else a word the deny holds
		context  string
		inReport string
	}{
		{name: "runs where the call ran", event: PreToolUse, pins: good, payload: payload, context: "ran here"},
		{name: "PostToolUse context", event: PostToolUse, pins: good, payload: payload, context: "ran here"},
		{name: "swapped script", event: PreToolUse, pins: []protocol.HookPin{{Path: "guard.sh", Sum: "0000"}}, payload: payload, deny: "changed since", inReport: "not run"},
		{name: "pin outside the project", event: PreToolUse, pins: []protocol.HookPin{{Path: "../guard.sh", Sum: good[0].Sum}}, payload: payload, deny: "not run"},
		{name: "file that must be absent", event: PostToolUse, pins: []protocol.HookPin{{Path: "guard.sh"}}, payload: payload, inReport: "created since"},
		{name: "refused here", event: PreToolUse, pins: good, refuse: "no Landlock", payload: payload, deny: "no Landlock"},
		{name: "payload not an object", event: PreToolUse, pins: good, payload: json.RawMessage(`[1]`), deny: "could not run"},
		{name: "unknown event", event: "Stop", pins: good, payload: payload},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var report strings.Builder
			run := &protocol.HookRun{Event: tc.event, Payload: tc.payload, Commands: []protocol.HookCommand{{Command: "./guard.sh", TimeoutMS: 30000, Pins: tc.pins}}}
			got, _ := RunHere(t.Context(), run, Here{Dir: dir, ProjectDir: dir, Env: os.Environ(), Refuse: tc.refuse, Report: &report})
			if (tc.deny == "") != (got.Deny == "") || !strings.Contains(got.Deny, tc.deny) {
				t.Errorf("deny %q, want %q (report %s)", got.Deny, tc.deny, report.String())
			}
			if !strings.Contains(got.Context, tc.context) || (tc.context == "") != (got.Context == "") {
				t.Errorf("context %q, want %q (report %s)", got.Context, tc.context, report.String())
			}
			if !strings.Contains(report.String(), tc.inReport) {
				t.Errorf("report %q, want %q", report.String(), tc.inReport)
			}
		})
	}
}

// TestReportIsPrintable: what a hook says reaches the terminal as "· hook:"
// lines without control characters, whatever a subagent put in the tool
// input the hook echoed.
func TestReportIsPrintable(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  Result
		want string
	}{
		{"plain", Result{Messages: []string{"formatted 2 files"}}, "· hook: formatted 2 files\n"},
		{"escape sequences", Result{Messages: []string{"saw \x1b]0;owned\x07\x1b[2Jrm -rf"}}, "· hook: saw ]0;owned[2Jrm -rf\n"},
		{"each line said", Result{Failures: []string{"exit 2: bad\r\n\x1b[1Afake: ok\n\n"}, Messages: []string{"a\tb"}},
			"· hook: exit 2: bad\n· hook: [1Afake: ok\n· hook: a b\n"},
		{"nothing", Result{}, ""},
	} {
		var b strings.Builder
		report(&b, tc.res)
		if b.String() != tc.want {
			t.Errorf("%s: report wrote %q, want %q", tc.name, b.String(), tc.want)
		}
	}
}
