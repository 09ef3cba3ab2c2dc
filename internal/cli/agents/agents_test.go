package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/registry"
)

// fixture lays out a project and a home with a few definitions.
func fixture(t *testing.T, extra map[string]string) registry.Options {
	t.Helper()
	root := t.TempDir()
	ro := registry.Options{ProjectRoot: filepath.Join(root, "proj"), Home: filepath.Join(root, "home"), Claude: true}
	files := map[string]string{
		"proj/.brood/agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews diffs against the house style.\\nSecond line.\n" +
			"tools: Read, Grep, Bash(go vet:*)\nmodel: haiku\ntimeout: 10m\ncolor: blue\n---\nYou review.\n",
		"home/.claude/agents/reviewer.md": "---\nname: reviewer\ndescription: the user's reviewer\n---\n",
		"home/.claude/agents/scout.md":    "---\nname: scout\ndescription: Looks around.\ntools: read-only\neffort: extreme\n---\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ro
}

func run(t *testing.T, ro registry.Options, args ...string) (string, string, error) {
	t.Helper()
	cmd := newCmd(&Options{Registry: func() (registry.Options, error) { return ro, nil }}, nil)
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append([]string{}, args...)) // never nil: cobra would read os.Args
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestList(t *testing.T) {
	ro := fixture(t, nil)
	out, errOut, err := run(t, ro)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []string{"NAME", "explore", "general-purpose", "plan", "reviewer", "scout"}
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s", out)
	}
	col := strings.Index(lines[0], "DESCRIPTION")
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w+" ") {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], w)
		}
		if i > 0 && (len(lines[i]) <= col || lines[i][col-1] != ' ' || lines[i][col] == ' ') {
			t.Errorf("line %d is not aligned under DESCRIPTION: %q", i, lines[i])
		}
	}
	for _, s := range []string{
		"project " + filepath.Join(".brood", "agents", "reviewer.md"),
		"user " + filepath.Join("~", ".claude", "agents", "scout.md"),
		"haiku", "Read, Grep, Bash", "read-only", "Reviews diffs against the house style.",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("list lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "Second line") {
		t.Errorf("list shows more than the first line of a description:\n%s", out)
	}
	if !strings.Contains(errOut, "1 problem(s)") {
		t.Errorf("stderr = %q, want a note about the warning", errOut)
	}
}

func TestListJSON(t *testing.T) {
	ro := fixture(t, nil)
	out, _, err := run(t, ro, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Agents []struct {
			Name, Source, Path, Model, Description string
			Tools                                  []string
			AllTools                               bool `json:"all_tools"`
		}
		Diagnostics []registry.Diagnostic
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if len(got.Agents) != 5 || len(got.Diagnostics) != 1 {
		t.Fatalf("got %+v", got)
	}
	r := got.Agents[3]
	if r.Name != "reviewer" || r.Source != "project" || r.Model != "haiku" ||
		strings.Join(r.Tools, ",") != "Read,Grep,Bash" || r.Description != "Reviews diffs against the house style." {
		t.Errorf("reviewer row = %+v", r)
	}
	if g := got.Agents[1]; g.Name != "general-purpose" || !g.AllTools || g.Model != "inherit" {
		t.Errorf("general-purpose row = %+v", g)
	}
}

func TestShow(t *testing.T) {
	ro := fixture(t, nil)
	out, _, err := run(t, ro, "show", "REVIEWER")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"name:        reviewer",
		"model:       haiku",
		"tool rules:  Bash(go vet:*)",
		"effort:      inherit",
		"timeout:     10m0s",
		"color:       blue (kept, not used by brood)",
		"overrides:   " + filepath.Join("~", ".claude", "agents", "reviewer.md"),
		"prompt:\n  You review.",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("show lacks %q:\n%s", s, out)
		}
	}
	out, _, err = run(t, ro, "show", "explore")
	if err != nil || !strings.Contains(out, "read-only + Bash (read-only agent: Bash runs under the kernel sandbox") || !strings.Contains(out, "source:      built-in") {
		t.Errorf("show explore: %v\n%s", err, out)
	}
	if _, _, err := run(t, ro, "show", "nobody"); err == nil || !strings.Contains(err.Error(), "known agents: explore") {
		t.Errorf("show nobody: %v", err)
	}
}

func TestShowJSON(t *testing.T) {
	ro := fixture(t, nil)
	out, _, err := run(t, ro, "show", "reviewer", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got["timeout"] != "10m0s" || got["prompt"] != "You review." || got["model"] != "haiku" ||
		got["extra"].(map[string]any)["color"] != "blue" {
		t.Errorf("show --json = %s", out)
	}
}

func TestCheck(t *testing.T) {
	bad := map[string]string{"proj/.claude/agents/broken.md": "---\nname: broken\ntools: Read\n---\n"}
	tests := []struct {
		name    string
		extra   map[string]string
		args    func(ro registry.Options) []string
		wantErr bool
		want    []string
	}{
		{"all discovered, warnings only", nil, func(registry.Options) []string { return []string{"check"} }, false,
			[]string{"scout.md:5: warning: effort", "5 definition(s) loaded, 1 warning(s), 0 error(s)"}},
		{"all discovered, an error", bad, func(registry.Options) []string { return []string{"check"} }, true,
			[]string{"broken.md:2: error: description is required", "1 error(s)"}},
		{"one path", bad, func(ro registry.Options) []string {
			return []string{"check", filepath.Join(ro.ProjectRoot, ".brood")}
		}, false, []string{"1 definition(s) loaded, 0 warning(s), 0 error(s)"}},
		{"two paths, one bad", bad, func(ro registry.Options) []string {
			return []string{"check", filepath.Join(ro.ProjectRoot, ".brood"), filepath.Join(ro.ProjectRoot, ".claude/agents/broken.md")}
		}, true, []string{"broken.md:2: error", "1 definition(s) loaded, 0 warning(s), 1 error(s)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := fixture(t, tt.extra)
			out, _, err := run(t, ro, tt.args(ro)...)
			if tt.wantErr != (err != nil) || (err != nil && !errors.Is(err, ErrCheckFailed)) {
				t.Errorf("err = %v, want error %v", err, tt.wantErr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			// The same run as JSON agrees.
			out, _, err = run(t, ro, append(tt.args(ro), "--json")...)
			var got struct {
				Errors      int
				Diagnostics []registry.Diagnostic
			}
			if jerr := json.Unmarshal([]byte(out), &got); jerr != nil {
				t.Fatalf("%v in %s", jerr, out)
			}
			if (got.Errors > 0) != tt.wantErr || (err != nil) != tt.wantErr {
				t.Errorf("--json: errors=%d err=%v", got.Errors, err)
			}
			for _, d := range got.Diagnostics {
				if d.Line < 1 || d.Path == "" {
					t.Errorf("diagnostic without file:line: %+v", d)
				}
			}
		})
	}
}

func TestRegistryHookError(t *testing.T) {
	boom := errors.New("no settings")
	cmd := newCmd(&Options{Registry: func() (registry.Options, error) { return registry.Options{}, boom }}, nil)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	for _, args := range [][]string{{}, {"show", "x"}, {"check"}} {
		cmd.SetArgs(args)
		if err := cmd.Execute(); !errors.Is(err, boom) {
			t.Errorf("%v: err = %v", args, err)
		}
	}
}
