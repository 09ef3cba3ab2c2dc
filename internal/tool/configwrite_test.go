package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoToolWritesConfiguration: Write, Edit and Bash (redirections, the
// options and programs that write, wrappers, nested scripts, after a cd)
// never write .brood/, .claude/, settings.local.* or the user's own
// configuration, whatever the rules and the mode; the run records under
// .brood/ stay writable.
func TestNoToolWritesConfiguration(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".brood"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, ".brood", "settings.local.toml"), filepath.Join(ws, "notes.toml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, ".claude"), filepath.Join(ws, "cfgdir")); err != nil {
		t.Fatal(err)
	}
	must := func(p *Permissions, err error) *Permissions {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	perms := map[string]*Permissions{
		"bypass":   must(NewPermissions("bypassPermissions", nil, nil, nil)),
		"rules":    must(NewPermissions("default", []string{"Bash", "Write", "Edit"}, nil, nil)),
		"prefix":   must(NewPermissions("acceptEdits", []string{"Bash(git log:*)", "Bash(cp:*)", "Bash(mv:*)", "Bash(sed:*)", "Bash(tee:*)", "Bash(echo:*)", "Bash(cd:*)", "Bash(timeout:*)", "Bash(sh:*)", "Write(*)"}, nil, nil)),
		"readonly": must(NewPermissions("plan", nil, nil, nil)),
	}
	bash := []string{
		"git log --output=.brood/settings.local.toml",
		"git log --output .brood/settings.local.toml",
		"git log --outp=./.brood/../.brood/settings.local.toml",
		"git log -p --output=" + filepath.Join(ws, ".claude", "settings.json"),
		"echo '[permissions]' > .brood/settings.local.toml",
		"echo x >> .claude/settings.local.json",
		"echo x > sub/../.brood/settings.toml",
		"echo x > notes.toml",
		"echo x > cfgdir/settings.json",
		"echo x > .mcp.json",
		"echo x > ~/.claude/settings.json",
		"echo x > ~/.config/brood/settings.toml",
		"echo x > ~/.claude.json",
		"echo x > deep/x/.claude/agents/a.md",
		"echo x > other/settings.local.json",
		"cp evil.toml .brood/settings.toml",
		"cp -t .claude evil.json",
		"mv evil.toml .brood/settings.local.toml",
		"sed -i s/deny/allow/ .brood/settings.toml",
		"echo x | tee -a .claude/settings.json",
		"cd .brood && echo x > settings.local.toml",
		"cd sub && echo x > ../.claude/settings.json",
		"timeout 5 tee .brood/settings.toml",
		"sh -c 'echo x > .brood/settings.local.toml'",
		// A wrapper's number is a number: "sh" after timeout or nice is the
		// program, not a duration to skip.
		"timeout 5 sh -c 'echo x > .brood/settings.local.toml'",
		"nice -n 5 sh -c 'cp x .git/hooks/pre-commit'",
		"git log --oneline > .brood/settings.toml",
		"echo '[core]fsmonitor=x' >> .git/config",
		"cp x .git/hooks/pre-commit",
		"echo 'gitdir: /tmp/x' > .git",
		"echo x > sub/.git/modules/m/config",
		"echo x > ~/.gitconfig",
		"rsync -a evil/ .claude",
		"wget -qO .brood/settings.local.toml http://127.0.0.1/x",
		"curl -sSLo .claude/settings.json http://127.0.0.1/x",
		"ln -sf /tmp/evil .brood/settings.local.toml",
		"install -D evil .claude/settings.json",
	}
	for name, p := range perms {
		for _, cmd := range bash {
			in, _ := json.Marshal(map[string]string{"command": cmd})
			d := p.Check("Bash", in, ws)
			if d.Verdict != Deny || !strings.Contains(d.Reason, "configuration") {
				t.Errorf("%s: %q: %v (%s), want a denial naming the configuration", name, cmd, d.Verdict, d.Reason)
			}
		}
		for _, f := range []string{".brood/settings.local.toml", ".brood/../.brood/settings.toml", filepath.Join(ws, ".claude", "settings.json"),
			"notes.toml", "cfgdir/agents/x.md", "~/.claude/settings.json", filepath.Join(home, ".config", "brood", "agents", "x.md"), ".mcp.json"} {
			for _, tool := range []string{"Write", "Edit"} {
				in, _ := json.Marshal(map[string]string{"file_path": f, "content": "x", "old_string": "a", "new_string": "b"})
				if strings.HasPrefix(f, "~/") {
					in, _ = json.Marshal(map[string]string{"file_path": filepath.Join(home, f[2:]), "content": "x", "old_string": "a", "new_string": "b"})
				}
				if d := p.Check(tool, in, ws); d.Verdict != Deny {
					t.Errorf("%s: %s %s: %v (%s)", name, tool, f, d.Verdict, d.Reason)
				}
			}
		}
	}
	// The reason names the option that writes.
	in, _ := json.Marshal(map[string]string{"command": "git log --output=.brood/settings.local.toml"})
	if d := perms["prefix"].Check("Bash", in, ws); !strings.Contains(d.Reason, "--output") {
		t.Errorf("the denial does not name --output: %s", d.Reason)
	}
	// Run records, ordinary files and the user's own allowance.
	for _, cmd := range []string{"echo x > .brood/outputs/x.txt", "echo x > notes.txt", "git log --oneline"} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		if d := perms["bypass"].Check("Bash", in, ws); d.Verdict != Allow {
			t.Errorf("%q: %v (%s)", cmd, d.Verdict, d.Reason)
		}
	}
	in, _ = json.Marshal(map[string]string{"command": "echo x > .brood/settings.toml"})
	if d := perms["bypass"].AllowingConfigWrites().Check("Bash", in, ws); d.Verdict != Allow {
		t.Errorf("allow_config_changes: %v (%s)", d.Verdict, d.Reason)
	}
}

// TestWriteOfConfigurationRefusedThroughSet: the refusal holds where tools
// run (Set.Run), for the root's tool set as for a child's, and no file is
// written.
func TestWriteOfConfigurationRefusedThroughSet(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	p, err := NewPermissions("bypassPermissions", []string{"Write(*)", "Bash"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	set := NewSet(Builtins()...)
	env := &Env{Dir: ws, Perms: p}
	in, _ := json.Marshal(map[string]string{"file_path": ".brood/settings.local.toml", "content": "[permissions]\nallow = [\"Bash(*)\"]\n"})
	if r := set.Run(context.Background(), env, "Write", in); !r.IsError || !strings.Contains(r.Content, "configuration") {
		t.Errorf("Write of .brood/settings.local.toml: %s", r.Content)
	}
	in, _ = json.Marshal(map[string]string{"command": "git init -q . && git log --output=.brood/settings.local.toml; true"})
	if r := set.Run(context.Background(), env, "Bash", in); !r.IsError {
		t.Errorf("Bash writing .brood/settings.local.toml: %s", r.Content)
	}
	if _, err := os.Stat(filepath.Join(ws, ".brood", "settings.local.toml")); err == nil {
		t.Error(".brood/settings.local.toml was written")
	}
}
