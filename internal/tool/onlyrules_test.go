package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWithOnly: an untrusted project agent's tool specifiers narrow the
// tool they name and allow nothing: a call outside them is denied in any
// mode, one inside is decided by the user's rules and mode as before.
func TestWithOnly(t *testing.T) {
	const ws = "/w"
	for _, tc := range []struct {
		name        string
		mode        string
		allow, only []string
		tool        string
		input       json.RawMessage
		want        Verdict
		reason      string
	}{
		{name: "inside, no rule of the user's: asked", mode: "default", only: []string{"Bash(touch:*)"}, tool: "Bash", input: bashIn("touch a"), want: Ask},
		{name: "inside, dontAsk: denied", mode: "dontAsk", only: []string{"Bash(touch:*)"}, tool: "Bash", input: bashIn("touch a"), want: Deny},
		{name: "inside, the user's rule allows", mode: "default", allow: []string{"Bash(touch:*)"}, only: []string{"Bash(touch:*)"}, tool: "Bash", input: bashIn("touch a"), want: Allow},
		{name: "inside, bypass allows", mode: "bypassPermissions", only: []string{"Bash(touch:*)"}, tool: "Bash", input: bashIn("touch a"), want: Allow},
		{name: "outside, bypass: denied", mode: "bypassPermissions", only: []string{"Bash(touch:*)"}, tool: "Bash", input: bashIn("rm -rf a"), want: Deny, reason: "limits Bash to Bash(touch:*)"},
		{name: "outside, the user allows all of Bash: denied", mode: "default", allow: []string{"Bash"}, only: []string{"Bash(touch:*)"}, tool: "Bash", input: bashIn("curl x"), want: Deny, reason: "limits Bash to"},
		{name: "a second command outside: denied", mode: "bypassPermissions", only: []string{"Bash(touch:*)"}, tool: "Bash", input: bashIn("touch a && rm b"), want: Deny},
		{name: "a substitution: denied", mode: "bypassPermissions", only: []string{"Bash(touch:*)"}, tool: "Bash", input: bashIn("touch $(rm b)"), want: Deny},
		{name: "another tool is not narrowed", mode: "bypassPermissions", only: []string{"Bash(touch:*)"}, tool: "Write", input: pathIn("a.go"), want: Allow},
		{name: "path inside, acceptEdits allows", mode: "acceptEdits", only: []string{"Edit(src/**)"}, tool: "Edit", input: pathIn("src/a.go"), want: Allow},
		{name: "path outside: denied", mode: "acceptEdits", only: []string{"Edit(src/**)"}, tool: "Edit", input: pathIn("b.go"), want: Deny, reason: "limits Edit to Edit(src/**)"},
		{name: "nothing narrowed without rules", mode: "bypassPermissions", tool: "Bash", input: bashIn("rm -rf a"), want: Allow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPermissions(tc.mode, tc.allow, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if p, err = p.WithOnly(tc.only, " (theirs)"); err != nil {
				t.Fatal(err)
			}
			d := p.Check(tc.tool, tc.input, ws)
			if d.Verdict != tc.want || !strings.Contains(d.Reason, tc.reason) {
				t.Fatalf("got %s (%s), want %s (%q)", d.Verdict, d.Reason, tc.want, tc.reason)
			}
		})
	}
	if _, err := (&Permissions{}).WithOnly([]string{"Bash("}, ""); err == nil {
		t.Error("a specifier that does not parse was taken")
	}
}
