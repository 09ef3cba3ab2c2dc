package cmdutil

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/trust"
)

// TestProjectGatedCoversWhatItRuns: the files a project's hooks, its
// .mcp.json servers and its agents' inline servers run are in the grant's
// key beside the files that name them, and the widening says which; a
// file a hook only writes (>> log), data a server is given
// (--config=tools/notes.json) and files outside the project are not.
func TestProjectGatedCoversWhatItRuns(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	files := map[string]string{
		".claude/settings.json": `{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "./scripts/guard.sh >> hook.log; ` + outside + `/x.sh"}]}]}}`,
		"scripts/guard.sh":      "echo guard\n",
		"hook.log":              "old\n",
		".mcp.json":             `{"mcpServers": {"notes": {"command": "node", "args": ["tools/server.js", "--config=tools/notes.json"]}}}`,
		"tools/server.js":       "//\n",
		"tools/notes.json":      "{}\n",
		".brood/agents/a.md":    "---\nname: a\ndescription: a\nmcpServers:\n  - inl:\n      command: ./bin/inl\n---\nx\n",
		"bin/inl":               "#!/bin/sh\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "x.sh"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var rels, why []string
	for _, g := range projectGated(root, root, nil) {
		rels = append(rels, g.File.Rel)
		why = append(why, g.Widening...)
	}
	slices.Sort(rels)
	want := []string{".brood/agents/a.md", ".claude/settings.json", ".mcp.json", "bin/inl", "scripts/guard.sh", "tools/server.js"}
	if !slices.Equal(rels, want) {
		t.Errorf("gated files %q, want %q", rels, want)
	}
	text := strings.Join(why, "; ")
	for _, w := range []string{"runs scripts/guard.sh", "runs tools/server.js", "runs bin/inl"} {
		if !strings.Contains(text, w) {
			t.Errorf("the widening does not say %q: %s", w, text)
		}
	}
}

// TestProjectAgents: the project's own definitions the trust gate looks
// at, read from .brood/agents and .claude/agents (a link to a directory
// included), a built-in's name still shadowed; none without either
// directory.
func TestProjectAgents(t *testing.T) {
	def := func(name string) string { return "---\nname: " + name + "\ndescription: d\n---\nbody\n" }
	for _, c := range []struct {
		name  string
		files map[string]string
		link  string // .claude/agents made a link to this directory (under the root)
		want  []string
	}{
		{"no agent directories", map[string]string{"README.md": "x"}, "", nil},
		{"brood's", map[string]string{".brood/agents/a.md": def("a")}, "", []string{"a"}},
		{"Claude Code's", map[string]string{".claude/agents/b.md": def("b")}, "", []string{"b"}},
		{"a built-in's name is shadowed", map[string]string{".brood/agents/e.md": def("explore"), ".brood/agents/c.md": def("c")}, "", []string{"c"}},
		{"a link to a directory", map[string]string{"shared/d.md": def("d")}, "shared", []string{"d"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for name, body := range c.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.link != "" {
				if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(root, c.link), filepath.Join(root, ".claude", "agents")); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for _, d := range projectAgents(root) {
				if d.Source == registry.SourceProject {
					got = append(got, d.Name)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("project agents %q, want %q", got, c.want)
			}
		})
	}
}

// TestGrantCarriesOwnLocalFiles: the local files the root found the
// person's own go down in every child's grant with their content's hash,
// trusted project or not, and never as trust in the project.
func TestGrantCarriesOwnLocalFiles(t *testing.T) {
	own := []trust.File{{Rel: ".brood/settings.local.toml", Data: []byte("x")}}
	for _, tc := range []struct {
		name string
		pt   settings.ProjectTrust
	}{
		{"untrusted", settings.ProjectTrust{Own: own}},
		{"trusted", settings.ProjectTrust{Own: own, Trusted: true, Files: []trust.File{{Rel: ".brood/settings.toml", Data: []byte("y")}}}},
		{"forced", settings.ProjectTrust{Own: own, Trusted: true, Forced: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Factory{}
			f.Settings.Trust = tc.pt
			g := f.Grant()
			if !g.OwnsLocal(".brood/settings.local.toml", []byte("x")) || g.OwnsLocal(".brood/settings.local.toml", []byte("z")) {
				t.Errorf("grant %+v does not carry the own file with its content", g)
			}
			root := t.TempDir()
			path := filepath.Join(root, ".brood", "settings.local.toml")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if g.Trusts(root, path) != tc.pt.Forced {
				t.Errorf("the own file became trust in the project: %+v", g)
			}
		})
	}
}
