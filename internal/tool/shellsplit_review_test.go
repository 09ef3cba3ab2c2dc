package tool

import (
	"encoding/json"
	"testing"
)

// TestAllowRulesCannotBeSmuggledPast: lines that bash runs as more (or
// other) than what an allow rule names must not be allowed by it.
func TestAllowRulesCannotBeSmuggledPast(t *testing.T) {
	p, err := NewPermissions("default", []string{"Bash(git status:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"git status #'\ntouch pwned1",
		`git status $'\'' ; touch pwned2 #'`,
		"git status $(( $(touch pwned3) ))",
		"git status `git status \\`touch pwned4\\``",
		"git status > ~/.bashrc",
		"git status >> notes.txt",
		"git status &> out.txt",
		"git status $(",
	} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		if d := p.Check("Bash", in, t.TempDir()); d.Verdict == Allow {
			t.Errorf("%q allowed by %s (%s)", cmd, d.Rule, d.Reason)
		}
	}
	for _, cmd := range []string{"git status", "git status --short", "git status 2>&1", "git status > /dev/null", "git status | head -5"} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		if cmd == "git status | head -5" {
			continue // head is not allowed by the rule
		}
		if d := p.Check("Bash", in, t.TempDir()); d.Verdict != Allow {
			t.Errorf("%q not allowed: %s", cmd, d.Reason)
		}
	}
}

// TestDenyRulesSeeThroughSpellings: a deny rule holds whatever way the
// command is spelt.
func TestDenyRulesSeeThroughSpellings(t *testing.T) {
	p, err := NewPermissions("bypassPermissions", nil, []string{"Bash(rm:*)"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"/bin/rm -rf x", `\rm x`, "command rm x", "r''m x", "FOO=1 rm x", "xargs rm < list",
		"env A=1 rm x", "sh -c 'rm -rf x'", "bash -c \"cd /; rm x\"", "eval rm x", "timeout 5 rm x",
	} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		if d := p.Check("Bash", in, t.TempDir()); d.Verdict != Deny {
			t.Errorf("%q: %v (%s), want deny", cmd, d.Verdict, d.Reason)
		}
	}
	in, _ := json.Marshal(map[string]string{"command": "ls -la"})
	if d := p.Check("Bash", in, t.TempDir()); d.Verdict != Allow {
		t.Errorf("ls denied: %s", d.Reason)
	}
}
