package settings_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/testbrood"
)

// TestRefusalAdviceNoBroadRule (review40 P2-G): through the real CLI, a
// root whose Bash calls are refused in -p reads advice that grants no
// more than the call: no rule to keep for an interpreter's or a shell's
// inline code, a wrapper, or a bare file mover (approve it when asked,
// or --allow the exact line for one run), a program that runs code an
// argument or option names (make -f, npx, go run: review42 P2-A), a
// program of the repository's
// in this project's local file, a plain program's prefix in the user's
// file. The exact --allow the advice gives, pasted, runs the call.
func TestRefusalAdviceNoBroadRule(t *testing.T) {
	p := testbrood.NewProject(t, mainEnv, map[string]string{"build.sh": "echo built\n", "cfg/a": "x\n"})
	spec := p.Script("broad.yaml", `agents:
  root:
    - tools:
        - Bash: {command: "sh -c 'echo inline-ran'"}
        - Bash: {command: "bash ./build.sh"}
        - Bash: {command: "env FOO=1 make"}
        - Bash: {command: "mv cfg cfg2"}
        - Bash: {command: "make build"}
        - Bash: {command: "make -f x.mk"}
        - Bash: {command: "npx cowsay hi"}
        - Bash: {command: "go run ./x"}
    - say: "R0={{result 0}}\nR1={{result 1}}\nR2={{result 2}}\nR3={{result 3}}\nR4={{result 4}}\nR5={{result 5}}\nR6={{result 6}}\nR7={{result 7}}\n"
`)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	env := []string{"BROOD_MODEL=", "BROOD_TRUST_PROJECT="}
	code, out, errOut := p.Brood(ctx, env, "-p", "--model", spec, "x")
	none := func(prog string) string {
		return `no rule to keep is suggested (one for "` + prog + `" would allow far more than this call): approve the call when asked (run brood without -p)`
	}
	for _, tc := range []struct{ key, want string }{
		{"R0=", none("sh") + `, or pass --allow 'Bash(sh -c '\''echo inline-ran'\'')' for one run`},
		{"R1=", `to allow it add "Bash(bash ./build.sh:*)" to [permissions] allow in .brood/settings.local.toml (this project only: edited by hand, it needs brood trust), or pass --allow 'Bash(bash ./build.sh:*)'`},
		{"R2=", none("env") + `, or pass --allow 'Bash(env FOO=1 make)' for one run`},
		{"R3=", none("mv") + `, or pass --allow 'Bash(mv cfg cfg2)' for one run`},
		{"R4=", `to allow it add "Bash(make build:*)" to [permissions] allow in .brood/settings.local.toml (this project only: edited by hand, it needs brood trust), or pass --allow 'Bash(make build:*)'`},
		{"R5=", none("make") + `, or pass --allow 'Bash(make -f x.mk)' for one run`},
		{"R6=", none("npx") + `, or pass --allow 'Bash(npx cowsay hi)' for one run`},
		{"R7=", none("go") + `, or pass --allow 'Bash(go run ./x)' for one run`},
	} {
		line := lineAfter(out, tc.key)
		if !strings.Contains(line, tc.want) {
			t.Errorf("%s refusal (exit %d):\n%s\nlacks\n%s\n%s", tc.key, code, line, tc.want, errOut)
		}
	}
	if m := regexp.MustCompile(`add "Bash(?:\((?:sh|bash|env|mv|make|npx|npx cowsay|go run \./x):\*\))?"`).FindString(out); m != "" {
		t.Errorf("a refusal suggests the broad rule %s:\n%s", m, out)
	}
	// The exact line, as the advice quotes it for a shell.
	code, out, errOut = p.Brood(ctx, env, "-p", "--model", spec, "--allow", "Bash(sh -c 'echo inline-ran')", "x")
	if !strings.Contains(lineAfter(out, "R0="), "inline-ran") || strings.Contains(lineAfter(out, "R0="), "permission denied") {
		t.Errorf("the exact --allow the advice gives did not run the call (exit %d):\n%s\n%s", code, out, errOut)
	}
}

// lineAfter is the line of out that starts with key, without it.
func lineAfter(out, key string) string {
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, key); ok {
			return rest
		}
	}
	return ""
}

// TestAskRefusalNamesItsFile: through the real CLI, in -p (no one to
// answer), a call an ask rule asks about is refused naming the settings
// files that hold that rule (the user's Claude Code file, the project's
// .brood/settings.toml, --settings), not always .brood/settings.toml.
func TestAskRefusalNamesItsFile(t *testing.T) {
	p := testbrood.NewProject(t, mainEnv, nil)
	testbrood.WriteFile(t, filepath.Join(p.Home, ".claude", "settings.json"), `{"permissions": {"ask": ["Bash(rm:*)"]}}`)
	testbrood.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "[permissions]\nask = [\"Bash(git push:*)\", \"Bash(rm:*)\"]\n")
	spec := p.Script("ask.yaml", `agents:
  root:
    - tools:
        - Bash: {command: "rm -f gone"}
        - Bash: {command: "git push origin main"}
        - Bash: {command: "touch made"}
    - say: "A0={{result 0}}\nA1={{result 1}}\nA2={{result 2}}\n"
`)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	code, out, errOut := p.Brood(ctx, []string{"BROOD_MODEL=", "BROOD_TRUST_PROJECT="}, "-p", "--model", spec, "--allow", "Bash", "--settings", `{"permissions": {"ask": ["Bash(touch:*)"]}}`, "x")
	for _, tc := range []struct{ key, want string }{
		{"A0=", `to allow it remove "Bash(rm:*)" from the permissions ask list of ~/.claude/settings.json, .brood/settings.toml, or approve the call when asked (run brood without -p)`},
		{"A1=", `to allow it remove "Bash(git push:*)" from the permissions ask list of .brood/settings.toml, or approve`},
		{"A2=", `to allow it remove "Bash(touch:*)" from the permissions ask list of the --settings file, or approve`},
	} {
		if line := lineAfter(out, tc.key); !strings.Contains(line, tc.want) {
			t.Errorf("%s refusal (exit %d):\n%s\nlacks\n%s\n%s", tc.key, code, line, tc.want, errOut)
		}
	}
}

// TestRefusalSaidOnce (newuser P3-4): through the real CLI, a subagent
// rejected for a refused call has that refusal's advice said once in the
// root's reading of the result (its Error line; the Concern refers to
// it), once on stderr (the rejection's progress line, whole), and once in
// brood tasks show; the rejected result still names the call.
func TestRefusalSaidOnce(t *testing.T) {
	p := testbrood.NewProject(t, mainEnv, nil)
	spec := p.Script("once.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: build, prompt: "build it"}
    - say: "ROOT READ: {{result 0}}"
  general-purpose:
    - tools:
        - Bash: {command: "make build"}
    - say: "## What I did\nTried to build.\n\n## What I found\nNothing.\n\n## Files changed\nnone\n\n## Problems\nnone"
`)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	code, out, errOut := p.Brood(ctx, []string{"BROOD_MODEL=", "BROOD_TRUST_PROJECT="}, "-p", "--model", spec, "x")
	const advice = `to allow it add "Bash(make build:*)" to [permissions] allow in .brood/settings.local.toml (this project only: edited by hand, it needs brood trust), or pass --allow 'Bash(make build:*)'`
	if n := strings.Count(out, advice); n != 1 || !strings.Contains(out, `status="rejected"`) || !strings.Contains(out, `Concern: unauthorized: Bash "make build" was refused (the Error line above says why)`) {
		t.Errorf("the root read the refusal's advice %d times, want once, with the Concern referring to it (exit %d):\n%s\n%s", n, code, out, errOut)
	}
	if n := strings.Count(errOut, advice); n != 1 {
		t.Errorf("stderr says the refusal's advice %d times, want once, whole:\n%s", n, errOut)
	}
	id := regexp.MustCompile(`task-id="([0-9A-Z]+)"`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no task id in:\n%s", out)
	}
	code, show, errOut := p.Brood(ctx, nil, "tasks", "show", id[1])
	if n := strings.Count(show, advice); code != 0 || n != 1 || !strings.Contains(show, `Bash "make build" was refused`) {
		t.Errorf("brood tasks show says the refusal's advice %d times, want once (exit %d):\n%s\n%s", n, code, show, errOut)
	}
}
