package settings_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/testbrood"
)

const mainEnv = "BROOD_SETTINGS_TEST_MAIN"

func TestMain(m *testing.M) { testbrood.Main(m, mainEnv) }

// TestMalformedClaudeSettings: through the real CLI, a .claude/settings.json
// that is not JSON is named with file:line:col and what to do; it stops a
// command that runs agents (brood run: its deny rules could be in it) and
// no other (brood tasks, trust --list, doctor, --help), which say it in a
// warning and go on with brood's defaults. brood trust will not judge a
// broken file.
func TestMalformedClaudeSettings(t *testing.T) {
	p := testbrood.NewProject(t, mainEnv, nil)
	testbrood.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"), "{\n  \"permissions\": {\n    \"allow\": [\"Read\",]\n  }\n}\n")
	where := filepath.Join(".claude", "settings.json") + ":3:22: invalid character ']'"
	for _, tc := range []struct {
		args   []string
		ok     bool
		stdout string
	}{
		{[]string{"tasks"}, true, "no dispatches yet"},
		{[]string{"trust", "--list"}, true, "no trusted projects"},
		{[]string{"doctor"}, true, "landlock"},
		{[]string{"--help"}, true, "delegation"},
		{[]string{"run", "--model", "script:none.yaml", "hi"}, false, ""},
		{[]string{"trust"}, false, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			code, out, errOut := p.Brood(ctx, nil, tc.args...)
			if tc.ok && code != 0 && tc.args[0] != "doctor" {
				t.Errorf("exit %d, want 0: a broken settings file blocked a command that needs none\n%s\n%s", code, out, errOut)
			}
			if !tc.ok && code == 0 {
				t.Errorf("exit 0 with a broken settings file\n%s\n%s", out, errOut)
			}
			if !strings.Contains(out, tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s\n%s", tc.stdout, out, errOut)
			}
			if tc.args[0] != "--help" && (!strings.Contains(errOut, where) || !strings.Contains(errOut, "fix the file or move it aside")) {
				t.Errorf("stderr does not name file:line:col and what to do:\n%s", errOut)
			}
		})
	}
}

// TestClaudeSettingsModel: through the real CLI, a project's
// .claude/settings.json "model" is the run's model once the project is
// trusted; untrusted, it is held back and the trust notice says so and why.
// (Its env and additionalDirectories have tests of their own.)
func TestClaudeSettingsModel(t *testing.T) {
	p := testbrood.NewProject(t, mainEnv, nil)
	spec := p.Script("hello.yaml", "agents:\n  root:\n    - say: \"hello from the project's model\"\n")
	testbrood.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"),
		"{\n  \"model\": \""+spec+"\",\n  \"env\": {\"FOO\": \"bar\"},\n  \"permissions\": {\"additionalDirectories\": [\"../other\"]}\n}\n")
	for _, tc := range []struct {
		name    string
		env     []string
		ok      bool
		wantErr []string
	}{
		{"trusted", []string{"BROOD_TRUST_PROJECT=1"}, true, nil},
		{"untrusted", nil, false, []string{"model " + spec + " (.claude/settings.json chooses the model"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			code, out, errOut := p.Brood(ctx, append([]string{"BROOD_MODEL=", "ANTHROPIC_API_KEY=", "OPENAI_API_KEY="}, tc.env...), "run", "hi")
			if got := strings.Contains(out, "hello from the project's model"); got != tc.ok {
				t.Errorf("ran on the project's model: %v, want %v (exit %d)\n%s\n%s", got, tc.ok, code, out, errOut)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// TestClaudeSettingsAdditionalDirectories: through the real CLI, a
// project's .claude/settings.json permissions.additionalDirectories (one
// relative to the project, as Claude Code reads it) is --add-dir's once the
// project is trusted: under acceptEdits the root's Write there is allowed
// and the system prompt names it. Untrusted, it is held back (the Write is
// refused) and the trust notice says so.
func TestClaudeSettingsAdditionalDirectories(t *testing.T) {
	p := testbrood.NewProject(t, mainEnv, nil)
	extra := filepath.Join(filepath.Dir(p.Root), "other")
	target := filepath.Join(extra, "out.txt")
	testbrood.WriteFile(t, filepath.Join(extra, "keep"), "")
	spec := p.Script("write.yaml", "agents:\n  root:\n    - tools:\n        - Write: {file_path: "+target+", content: \"hi\"}\n    - say: \"SYSTEM={{.System}}\"\n")
	testbrood.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"),
		"{\n  \"permissions\": {\"additionalDirectories\": [\"../other\"]}\n}\n")
	for _, tc := range []struct {
		name    string
		env     []string
		written bool
		want    string // on stdout (trusted) or stderr (untrusted)
	}{
		{"untrusted", nil, false, "permissions.additionalDirectories " + extra + " (the agent would work outside the project)"},
		{"trusted", []string{"BROOD_TRUST_PROJECT=1"}, true, "Additional working directories (--add-dir): " + extra},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			env := append([]string{"BROOD_MODEL=", "ANTHROPIC_API_KEY=", "OPENAI_API_KEY="}, tc.env...)
			code, out, errOut := p.Brood(ctx, env, "-p", "--model", spec, "--permission-mode", "acceptEdits", "--", "Write it.")
			_, err := os.Stat(target)
			if code != 0 || (err == nil) != tc.written {
				t.Fatalf("exit %d, written %v, want %v\n%s\n%s", code, err == nil, tc.written, out, errOut)
			}
			if !strings.Contains(out+errOut, tc.want) {
				t.Errorf("output lacks %q:\n%s\n%s", tc.want, out, errOut)
			}
		})
	}
}

// TestClaudeSettingsEnv: through the real CLI, a project's
// .claude/settings.json "env" is in the environment of the root's Bash and
// hooks and of a subagent's (its Bash, the hooks of its calls) once the
// project is trusted, a secret-looking one's value
// redacted from what the model reads; untrusted, it is held back and the
// trust notice names the variables (not their values).
func TestClaudeSettingsEnv(t *testing.T) {
	p := testbrood.NewProject(t, mainEnv, nil)
	const secret = "tok-9f8e7d6c5b4a39281706"
	spec := p.Script("env.yaml", `agents:
  root:
    - tools:
        - Bash: {command: 'echo "ROOT G=$SETTINGS_GREETING T=$DEPLOY_TOKEN X=[$GIT_CONFIG_GLOBAL]"'}
        - Task: {subagent_type: general-purpose, description: "env", prompt: "Echo it."}
    - say: "SAW {{result 0}} CHILD {{result 1}}"
  general-purpose:
    - tools:
        - Bash: {command: 'echo "KID G=$SETTINGS_GREETING"'}
    - say: "## What I did\nEchoed.\n## What I found\n{{result 0}}\n## Files changed\nnone\n## Problems\nnone"
`)
	testbrood.WriteFile(t, filepath.Join(p.Root, "scripts", "greet.sh"),
		"#!/bin/sh\ncat > /dev/null\nprintf '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"HOOK G=%s\"}}' \"$SETTINGS_GREETING\"\n")
	if err := os.Chmod(filepath.Join(p.Root, "scripts", "greet.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	testbrood.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"),
		"{\n  \"env\": {\"SETTINGS_GREETING\": \"hello-from-settings\", \"DEPLOY_TOKEN\": \""+secret+"\", \"GIT_CONFIG_GLOBAL\": \"evil.gitconfig\"},\n"+
			"  \"hooks\": {\"PostToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./scripts/greet.sh\"}]}]}\n}\n")
	for _, tc := range []struct {
		name    string
		env     []string
		want    []string
		wantErr string
	}{
		{"untrusted", nil, []string{"ROOT G= T= X=[]", "KID G=\n"}, "env DEPLOY_TOKEN, GIT_CONFIG_GLOBAL, SETTINGS_GREETING (variables for every command"},
		{"trusted", []string{"BROOD_TRUST_PROJECT=1"}, []string{"ROOT G=hello-from-settings T=[REDACTED:DEPLOY_TOKEN] X=[]", "KID G=hello-from-settings",
			"HOOK G=hello-from-settings CHILD", "HOOK G=hello-from-settings\n## Files"}, "env GIT_CONFIG_GLOBAL is not applied: it steers the git brood itself runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			env := append([]string{"BROOD_MODEL=", "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "SETTINGS_GREETING=", "DEPLOY_TOKEN=", "GIT_CONFIG_GLOBAL="}, tc.env...)
			code, out, errOut := p.Brood(ctx, env, "-p", "--model", spec, "--permission-mode", "bypassPermissions", "--", "Go.")
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s\n%s", w, out, errOut)
				}
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("the secret-looking value reached the output:\n%s\n%s", out, errOut)
			}
			if !strings.Contains(errOut, tc.wantErr) || strings.Contains(errOut, "hello-from-settings") {
				t.Errorf("stderr lacks %q (or names a value):\n%s", tc.wantErr, errOut)
			}
		})
	}
}

// TestRepositoryCannotEraseDenies: through the real CLI, in an untrusted
// project whose own .brood/settings.toml has a one-rule deny list, the
// deny rules of the user's ~/.config/brood/settings.toml, the user's
// ~/.claude/settings.json and the project's .claude/settings.json all hold:
// `brood config get permissions.deny` lists every rule, and a scripted
// run's Read of the denied file is refused (the secret is not printed).
func TestRepositoryCannotEraseDenies(t *testing.T) {
	for _, tc := range []struct {
		name, file, data string
	}{
		{"user settings.toml", ".config/brood/settings.toml", "[permissions]\ndeny = [\"Read(secrets/**)\", \"Bash(cat:*)\"]\n"},
		{"user claude settings.json", ".claude/settings.json", `{"permissions": {"deny": ["Read(secrets/**)", "Bash(cat:*)"]}}`},
		{"project claude settings.json", "project:.claude/settings.json", `{"permissions": {"deny": ["Read(secrets/**)", "Bash(cat:*)"]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testbrood.NewProject(t, mainEnv, map[string]string{"secrets/k": "TOKEN=s3cr3t\n", "README.md": "# r\n"})
			if rel, ok := strings.CutPrefix(tc.file, "project:"); ok {
				testbrood.WriteFile(t, filepath.Join(p.Root, rel), tc.data)
			} else {
				testbrood.WriteFile(t, filepath.Join(p.Home, tc.file), tc.data)
			}
			testbrood.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "[permissions]\ndeny = [\"Bash(zzz:*)\"]\n")
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			env := []string{"BROOD_MODEL=", "BROOD_TRUST_PROJECT="}
			code, out, errOut := p.Brood(ctx, env, "config", "get", "permissions.deny")
			if code != 0 {
				t.Fatalf("config get: exit %d\n%s\n%s", code, out, errOut)
			}
			for _, r := range []string{"Read(secrets/**)", "Bash(cat:*)", "Bash(zzz:*)"} {
				if strings.Count(out, r) != 1 {
					t.Errorf("config get permissions.deny names %q %d times, want once:\n%s", r, strings.Count(out, r), out)
				}
			}
			spec := p.Script("rd.yaml", "agents:\n  root:\n    - tools:\n        - Read: {file_path: secrets/k}\n    - say: \"read: {{result 0}}\"\n")
			code, out, errOut = p.Brood(ctx, env, "-p", "--model", spec, "x")
			if strings.Contains(out+errOut, "s3cr3t") || !strings.Contains(out, "read: ") || !strings.Contains(out, "Read(secrets/**)") {
				t.Errorf("the Read of a denied file was not refused by its rule (exit %d):\n%s\n%s", code, out, errOut)
			}
		})
	}
}

// TestHeldRuleRefusalSaysTrust (review40 P2-D): through the real CLI, in
// an untrusted project whose .claude/settings.json allows Bash(gh pr:*)
// and also asks for bypassPermissions and a SessionStart hook,
// the root's and a subagent's `gh pr list` are refused with the
// narrow route first (that rule in the user's file, or --allow for one
// run), then the held-back rule, and that brood trust would also grant the
// mode and the hook; never "run brood trust" alone. A build runner's
// refusal (make build) names this project's local file and the narrowest
// prefix (review-sweep P2-1).
func TestHeldRuleRefusalSaysTrust(t *testing.T) {
	p := testbrood.NewProject(t, mainEnv, nil)
	testbrood.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"), `{"permissions": {"allow": ["Bash(gh pr:*)", "Bash(curl:*)"], "defaultMode": "bypassPermissions"},
 "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch hooked"}]}]}}`)
	spec := p.Script("held.yaml", `agents:
  root:
    - tools:
        - Bash: {command: "gh pr list"}
        - Task: {subagent_type: general-purpose, description: tests, prompt: "run the tests"}
        - Bash: {command: "make build"}
    - say: "ROOT={{result 0}} CHILD={{result 1}} OTHER={{result 2}}"
  general-purpose:
    - tools:
        - Bash: {command: "gh pr list"}
    - say: "child saw: {{result 0}}"
`)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	code, out, errOut := p.Brood(ctx, []string{"BROOD_MODEL=", "BROOD_TRUST_PROJECT="}, "-p", "--model", spec, "x")
	held := `to allow it add "Bash(gh pr:*)" to [permissions] allow in ~/.config/brood/settings.toml, or pass --allow 'Bash(gh pr:*)'; ` +
		`the project's allow rule "Bash(gh pr:*)" in .claude/settings.json would allow it too but is held back until you trust the project, ` +
		`and brood trust (or --trust-project for one run) would also grant everything the project's files ask: permissions.defaultMode bypassPermissions, allow rules, hooks`
	root, rest, _ := strings.Cut(out, "CHILD=")
	child, other, _ := strings.Cut(rest, "OTHER=")
	for _, c := range []struct{ name, text string }{{"root", root}, {"subagent", child}} {
		if !strings.Contains(c.text, held) || strings.Contains(c.text, "run brood trust") {
			t.Errorf("the %s's refusal does not offer the narrow route first, then brood trust with what it grants (exit %d):\n%s\n%s", c.name, code, c.text, errOut)
		}
	}
	if want := `to allow it add "Bash(make build:*)" to [permissions] allow in .brood/settings.local.toml (this project only: edited by hand, it needs brood trust), or pass --allow 'Bash(make build:*)'`; !strings.Contains(other, want) || strings.Contains(other, "held back") {
		t.Errorf("the other refusal lacks %q:\n%s", want, other)
	}
	if _, err := os.Stat(filepath.Join(p.Root, "hooked")); err == nil {
		t.Error("the untrusted project's hook ran")
	}
}

// TestTrustNoticeOnlyWhereAgentsRun (newuser P3-10): in an untrusted
// project whose files allow more than the defaults, a command that runs
// agents prints the trust notice, and so does brood config (the
// settings); one that only reads records (brood tasks, workflow list and
// show) does not print it every time.
func TestTrustNoticeOnlyWhereAgentsRun(t *testing.T) {
	p := testbrood.NewProject(t, mainEnv, nil)
	testbrood.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"), `{"permissions": {"allow": ["Edit(src/**)"], "defaultMode": "acceptEdits"}}`)
	spec := p.Script("hi.yaml", "agents:\n  root:\n    - say: hi\n")
	const notice = "allows more than the defaults"
	for _, tc := range []struct {
		args   []string
		notice bool
	}{
		{[]string{"tasks"}, false},
		{[]string{"workflow", "list"}, false},
		{[]string{"workflow", "show", "nosuchrun"}, false},
		{[]string{"config", "list"}, true},
		{[]string{"run", "--model", spec, "hi"}, true},
	} {
		t.Run(strings.Join(tc.args[:min(2, len(tc.args))], " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			_, out, errOut := p.Brood(ctx, []string{"BROOD_MODEL=", "BROOD_TRUST_PROJECT="}, tc.args...)
			if got := strings.Contains(errOut, notice); got != tc.notice {
				t.Errorf("trust notice printed: %v, want %v\n%s\n%s", got, tc.notice, out, errOut)
			}
		})
	}
}
