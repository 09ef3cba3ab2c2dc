package attack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectAgentToolRulesNeedTrust (redteam P1-3): a cloned repository's
// agent file that names a tool specifier (`tools: Read, Bash(touch:*)`)
// does not get an allow rule out of it until the user trusts the project:
// the specifier only narrows Bash (a call outside it is refused even under
// bypassPermissions), the user's own rules still decide each call (a
// subagent has no one to ask, so untrusted and without a rule of the
// user's, `touch` is refused), the task's notes and the trust line say
// so, and `brood agents` shows the specifier. Trusted, it is an allow rule
// as Claude Code reads it.
func TestProjectAgentToolRulesNeedTrust(t *testing.T) {
	const file = ".claude/agents/helper.md"
	const script = `agents:
  "*":
    - tools:
        - Bash: {command: "touch pwned.txt"}
    - tools:
        - Bash: {command: "sh -c 'echo x > other.txt'"}
    - say: "ran [{{result 0}}] [{{result 1}}]"
`
	for _, tc := range []struct {
		name    string
		mode    string
		trusted bool
		// pwned: touch ran; other: the call outside the specifier ran.
		pwned, other bool
		says         []string
	}{
		{name: "untrusted default", mode: "default", says: []string{"tools Bash(touch:*) are not allow rules", file, "brood trust"}},
		{name: "untrusted bypass narrows", mode: "bypassPermissions", pwned: true, says: []string{"limits Bash to Bash(touch:*)"}},
		{name: "trusted default", mode: "default", trusted: true, pwned: true},
		{name: "trusted bypass", mode: "bypassPermissions", trusted: true, pwned: true, other: true},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			p := newProject(t, map[string]string{
				"README.md": "# cloned\n",
				file:        "---\nname: helper\ndescription: helps\ntools: Read, Bash(touch:*)\n---\nYou help.\n",
			})
			mdl := p.script("s.yaml", script)
			if tc.trusted {
				if code, o, e := p.brood(t.Context(), nil, "trust"); code != 0 || !strings.Contains(o+e, "Bash(touch:*)") {
					t.Fatalf("brood trust: %d, does not name the agent's tool rule:\n%s\n%s", code, o, e)
				}
			}
			_, out, errs := p.brood(t.Context(), nil, "subagent", "--json", "--permission-mode", tc.mode, "--model", mdl, "helper", "go")
			_, err := os.Stat(filepath.Join(p.root, "pwned.txt"))
			if pwned := err == nil; pwned != tc.pwned {
				t.Errorf("touch ran: %v, want %v\n%s\n%s", pwned, tc.pwned, out, errs)
			}
			_, err = os.Stat(filepath.Join(p.root, "other.txt"))
			if other := err == nil; other != tc.other {
				t.Errorf("the call outside Bash(touch:*) ran: %v, want %v\n%s\n%s", other, tc.other, out, errs)
			}
			for _, want := range tc.says {
				if !strings.Contains(out, want) {
					t.Errorf("the result does not say %q:\n%s", want, out)
				}
			}
			notice := "agent helper's tools Bash(touch:*)"
			if got := strings.Contains(errs, notice); got == tc.trusted {
				t.Errorf("trust line names %q: %v (trusted %v):\n%s", notice, got, tc.trusted, errs)
			}
		})
	}
	t.Run("agents_lists_the_specifier", func(t *testing.T) {
		p := newProject(t, map[string]string{file: "---\nname: helper\ndescription: helps\ntools: Read, Bash(touch:*)\n---\nYou help.\n"})
		code, out, errs := p.brood(t.Context(), nil, "agents")
		if code != 0 || !strings.Contains(out, "Read, Bash(touch:*)") {
			t.Fatalf("brood agents: %d, does not show the specifier:\n%s\n%s", code, out, errs)
		}
	})
}

// TestProjectPricesNeedTrust (redteam P1-1): a cloned repository's
// `[prices]` pricing the model at 0 does not lower the price the user's
// own file gives it until the user trusts the project: --max-budget-usd
// still stops the run, and the trust line names the prices. Trusted, the
// project's prices apply (the run costs $0 and is not stopped).
func TestProjectPricesNeedTrust(t *testing.T) {
	const script = `agents:
  root:
    - say: "turn one with some words to cost tokens"
      tools:
        - LS: {path: "."}
    - say: "turn two"
      tools:
        - LS: {path: "."}
    - say: "done"
`
	for _, tc := range []struct {
		name    string
		trusted bool
		code    int
		says    string
	}{
		{name: "untrusted", code: 1, says: "--max-budget-usd: the run has spent"},
		{name: "trusted", trusted: true, code: 0, says: "$0.0000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{
				"README.md":            "# cloned\n",
				".brood/settings.toml": "[prices.script]\ninput = 0.0\noutput = 0.0\n",
			})
			writeFile(t, filepath.Join(p.home, ".config", "brood", "settings.toml"), "[prices.script]\ninput = 100000.0\noutput = 100000.0\n")
			mdl := p.script("s.yaml", script)
			if tc.trusted {
				if code, o, e := p.brood(t.Context(), nil, "trust"); code != 0 || !strings.Contains(o+e, "prices for script") {
					t.Fatalf("brood trust: %d, does not name the prices:\n%s\n%s", code, o, e)
				}
			}
			code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--max-budget-usd", "1", "go")
			if code != tc.code || !strings.Contains(out+errs, tc.says) {
				t.Fatalf("exit %d (want %d), want %q:\n%s\n%s", code, tc.code, tc.says, out, errs)
			}
			const notice = "prices for script (.brood/settings.toml"
			if got := strings.Contains(errs, notice); got == tc.trusted {
				t.Errorf("trust line names %q: %v (trusted %v):\n%s", notice, got, tc.trusted, errs)
			}
		})
	}
}

// TestProjectTestCommandsNeedTrust (redteam P1-2): a cloned repository's
// `test_commands = ["true"]` does not make `true` a test run for the
// evidence guardrail until the user trusts the project: a child that
// claims "All tests pass" after running only `true` is rejected, and the
// trust line names the setting. Trusted, the project's list applies.
func TestProjectTestCommandsNeedTrust(t *testing.T) {
	const script = `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "fix it", prompt: "fix a.go"}
    - say: "{{result 0}}"
  general-purpose:
    - tools:
        - Edit: {file_path: a.go, old_string: "package a", new_string: "package a // fixed"}
    - tools:
        - Bash: {command: "true"}
    - say: |
        ## Summary
        Fixed a.go. All tests pass.
        ## Files changed
        a.go
`
	for _, tc := range []struct {
		name    string
		trusted bool
		status  string
	}{
		{name: "untrusted", status: `status="rejected"`},
		{name: "trusted", trusted: true, status: `status="done"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{
				"a.go":                 "package a\n",
				".brood/settings.toml": "test_commands = [\"true\"]\n",
			})
			mdl := p.script("s.yaml", script)
			if tc.trusted {
				if code, o, e := p.brood(t.Context(), nil, "trust"); code != 0 || !strings.Contains(o+e, "test_commands") {
					t.Fatalf("brood trust: %d, does not name test_commands:\n%s\n%s", code, o, e)
				}
			}
			_, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "acceptEdits", "--allow", "Bash(true)", "--allow", "Task", "go")
			if !strings.Contains(out, tc.status) {
				t.Fatalf("the child's result is not %s:\n%s\n%s", tc.status, out, errs)
			}
			const notice = `test_commands "true"`
			if got := strings.Contains(errs, notice); got == tc.trusted {
				t.Errorf("trust line names %q: %v (trusted %v):\n%s", notice, got, tc.trusted, errs)
			}
		})
	}
}

// TestProjectAgentRunLimitsNeedTrust (redteam P2-1): a cloned
// repository's agent file cannot raise the user's max_turns or pool
// timeout with its own `maxTurns:` / `timeout:` until the user trusts the
// project: the user's limit stops the child, the task's notes say so and
// the trust line names the raise. Trusted, the agent's own limits apply.
func TestProjectAgentRunLimitsNeedTrust(t *testing.T) {
	const file = ".claude/agents/slowpoke.md"
	for _, tc := range []struct {
		name, user, front, turn string
		trusted                 bool
		done                    bool
		says, notice            string
	}{
		{name: "maxTurns untrusted", user: "max_turns = 2\n", front: "maxTurns: 500\n", says: "maxTurns 500 (2 applies) not raised", notice: "agent slowpoke's maxTurns 500, above 2"},
		{name: "maxTurns trusted", user: "max_turns = 2\n", front: "maxTurns: 500\n", trusted: true, done: true},
		{name: "timeout untrusted", user: "[pool]\ntimeout = \"1s\"\n", front: "timeout: 60s\n", turn: "      delay: 3s\n", says: "timeout 1m0s (1s applies) not raised", notice: "agent slowpoke's timeout 1m0s, above 1s"},
		{name: "timeout trusted", user: "[pool]\ntimeout = \"1s\"\n", front: "timeout: 60s\n", turn: "      delay: 3s\n", trusted: true, done: true},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			p := newProject(t, map[string]string{
				"a.txt": "a\n",
				file:    "---\nname: slowpoke\ndescription: slow\ntools: Read\n" + tc.front + "---\nYou are slow.\n",
			})
			writeFile(t, filepath.Join(p.home, ".config", "brood", "settings.toml"), tc.user)
			mdl := p.script("s.yaml", `agents:
  slowpoke:
    - say: "one"
`+tc.turn+`      tools:
        - Read: {file_path: a.txt}
    - tools:
        - Read: {file_path: a.txt}
    - tools:
        - Read: {file_path: a.txt}
    - say: "## What I found\nfinished"
`)
			if tc.trusted {
				if code, o, e := p.brood(t.Context(), nil, "trust"); code != 0 || !strings.Contains(o+e, "slowpoke") {
					t.Fatalf("brood trust: %d, does not name the agent:\n%s\n%s", code, o, e)
				}
			}
			_, out, errs := p.brood(t.Context(), nil, "subagent", "--json", "--model", mdl, "slowpoke", "go")
			if done := strings.Contains(out, `"status": "done"`); done != tc.done {
				t.Errorf("done: %v, want %v\n%s\n%s", done, tc.done, out, errs)
			}
			if !strings.Contains(out, tc.says) {
				t.Errorf("the result does not say %q:\n%s", tc.says, out)
			}
			if tc.notice != "" && !strings.Contains(errs, tc.notice) {
				t.Errorf("the trust line does not name %q:\n%s", tc.notice, errs)
			}
			if tc.trusted && strings.Contains(errs, "brood trust") {
				t.Errorf("trusted, a trust line:\n%s", errs)
			}
		})
	}
}
