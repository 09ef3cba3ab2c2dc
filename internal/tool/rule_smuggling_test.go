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

// TestHiddenCodePathsNeedMoreThanAPrefixRule: bash features that run code
// a prefix rule never sees (arithmetic on variables, [[ ]], declarations,
// indirect expansions, >&file) are not approved by one.
func TestHiddenCodePathsNeedMoreThanAPrefixRule(t *testing.T) {
	p, err := NewPermissions("default", []string{"Bash(git status:*)", "Bash(go test:*)", "Bash(tail:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"x='a[$(touch pwned)]'; git status $((x))",
		"x='a[$(touch pwned)]'; git status ${a[x]}",
		"x='$(touch pwned)'; git status ${x@P}",
		"x='a[$(touch pwned)]'; [[ $x -eq 0 ]]; git status",
		"((x)); git status",
		"let 'x=a[$(touch pwned)]'; git status",
		"declare -i y='a[$(touch pwned)]'; git status",
		"export GIT_CONFIG_COUNT=1; git status",
		"PATH=.:$PATH; git status",
		"git status >&pwned",
		"git status 1>&pwned",
		"f(){ rm x; }; git status",
	} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		if d := p.Check("Bash", in, t.TempDir()); d.Verdict == Allow {
			t.Errorf("%q allowed by %s", cmd, d.Rule)
		}
	}
	for _, cmd := range []string{"go test ./... 2>&1 | tail -20", "git status >&2", "git status --short 2>/dev/null"} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		if d := p.Check("Bash", in, t.TempDir()); d.Verdict != Allow {
			t.Errorf("%q: %v (%s)", cmd, d.Verdict, d.Reason)
		}
	}
}

// TestDenyRulesSeeThroughMoreSpellings: expansions only the shell resolves
// are asked about whenever deny rules exist; wrapper options, shell flag
// clusters and git's global options do not hide the command.
func TestDenyRulesSeeThroughMoreSpellings(t *testing.T) {
	p, err := NewPermissions("bypassPermissions", nil, []string{"Bash(rm:*)", "Bash(git push:*)"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		`$'\x72m' -rf x`, "{rm,-rf,x}", "/bin/r? -rf x", "r[m] -rf x",
		"env -u HOME rm x", "timeout -s KILL 5 rm x", "sudo -u root rm x", "exec -a y rm x",
		"bash -xc 'rm x'", "bash -e -c 'rm x'", "sh -c -- 'rm x'",
		"git -C . push", "git --no-pager push", "git -c a.b=c push --force",
	} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		if d := p.Check("Bash", in, t.TempDir()); d.Verdict == Allow {
			t.Errorf("%q allowed (%s)", cmd, d.Reason)
		}
	}
}
