package run_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestSettingSources: --setting-sources chooses which settings files are
// read, as Claude Code's: user (~/.claude/settings.json), project
// (.claude/settings.json) and local (.claude/settings.local.json), each
// here denying one tool by name (which takes it off the model's list);
// "" reads none; a source that is none of the three exits 1 naming it.
func TestSettingSources(t *testing.T) {
	p := clitest.NewProject(t)
	clitest.WriteFile(t, filepath.Join(p.Home, ".claude", "settings.json"), `{"permissions":{"deny":["Write"]}}`)
	clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"), `{"permissions":{"deny":["Edit"]}}`)
	clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.local.json"), `{"permissions":{"deny":["Glob"]}}`)
	mdl := p.Script("s.yaml", echoScript)
	for _, tc := range []struct {
		name    string
		args    []string
		offered []string
		gone    []string
	}{
		{"every source", nil, nil, []string{"Write", "Edit", "Glob"}},
		{"user", []string{"--setting-sources", "user"}, []string{"Edit", "Glob"}, []string{"Write"}},
		{"project,local", []string{"--setting-sources", "project,local"}, []string{"Write"}, []string{"Edit", "Glob"}},
		{"local", []string{"--setting-sources", "local"}, []string{"Write", "Edit"}, []string{"Glob"}},
		{"none", []string{"--setting-sources", ""}, []string{"Write", "Edit", "Glob"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-p", "--model", mdl}, tc.args...)
			code, out, errOut := p.Brood(append(args, "--", "Say hello")...)
			if code != 0 || strings.Contains(errOut, "accepted;") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
			}
			_, after, _ := strings.Cut(out, "TOOLS=")
			list, _, _ := strings.Cut(after, " ")
			tools := strings.Split(list, ",")
			for _, n := range tc.offered {
				if !slices.Contains(tools, n) {
					t.Errorf("%s is not offered: %s", n, list)
				}
			}
			for _, n := range tc.gone {
				if slices.Contains(tools, n) {
					t.Errorf("%s is offered: %s", n, list)
				}
			}
		})
	}
	code, _, errOut := p.Brood("-p", "--model", mdl, "--setting-sources", "user,team", "--", "Say hello")
	if code != 1 || !strings.Contains(errOut, `--setting-sources: invalid setting source "team"; valid options are: user, project, local`) {
		t.Errorf("a bad source: exit %d, stderr %s", code, errOut)
	}
}

// TestSettingSourcesReachSubagents: a subagent that delegates reads the
// settings files the root read (--setting-sources, carried in its
// envelope), no others: with user alone, the project's
// .claude/settings.json (an env the child would warn about) and
// .brood/settings.toml (max_turns, which its own subagents' envelopes
// would carry) do not reach it; with every source they do.
func TestSettingSourcesReachSubagents(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		sources string // the lead's envelope's setting_sources
		project bool   // whether the project's files reach the lead
	}{
		{"user", []string{"--setting-sources", "user"}, `["user"]`, false},
		{"every source", nil, "null", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := clitest.NewProject(t)
			costProject(t, p)
			clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"), `{"env":{"BROOD_PROBE":"1"}}`)
			clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "max_turns = 7\n")
			args := append([]string{"-p", "--model", p.Script("s.yaml", costScript)}, tc.args...)
			code, out, errOut := p.Brood(append(args, "--", "Read the README through the lead.")...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
			}
			envs := envelopes(t, filepath.Join(p.Root, ".brood"))
			lead, explore := envs["lead"], envs["explore"]
			if lead.dir == "" || explore.dir == "" {
				t.Fatalf("envelopes found: %v", envs)
			}
			if got := string(lead.env["setting_sources"]); got != tc.sources {
				t.Errorf("the lead's setting_sources = %s, want %s", got, tc.sources)
			}
			if got := string(explore.env["setting_sources"]); got != tc.sources {
				t.Errorf("explore's setting_sources = %s, want %s (passed on)", got, tc.sources)
			}
			stderr, _ := os.ReadFile(filepath.Join(lead.dir, "stderr.log"))
			if warned := strings.Contains(string(stderr), "env BROOD_PROBE"); warned != tc.project {
				t.Errorf("the lead read .claude/settings.json: %v, want %v; its stderr.log:\n%s", warned, tc.project, stderr)
			}
			if seven := string(explore.env["max_turns"]) == "7"; seven != tc.project {
				t.Errorf("explore's max_turns %s from .brood/settings.toml: %v, want %v", explore.env["max_turns"], seven, tc.project)
			}
		})
	}
}

// taskEnvelope is one task's envelope, as JSON fields, and its directory.
type taskEnvelope struct {
	dir string
	env map[string]json.RawMessage
}

// envelopes finds every envelope.json under dir, by target agent.
func envelopes(t *testing.T, dir string) map[string]taskEnvelope {
	t.Helper()
	out := map[string]taskEnvelope{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "envelope.json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		var env map[string]json.RawMessage
		if err := json.Unmarshal(compact.Bytes(), &env); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		var agent string
		_ = json.Unmarshal(env["target_agent"], &agent)
		out[agent] = taskEnvelope{dir: filepath.Dir(path), env: env}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
