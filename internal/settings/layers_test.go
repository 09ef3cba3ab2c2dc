package settings_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/trust"
)

// layer is one settings file of Sources.Files, lowest precedence first.
type layer struct {
	name string
	path func(home, project string) string
}

func (l layer) json() bool { return strings.HasSuffix(l.name, ".json") }

var layers = []layer{
	{"~/.claude/settings.json", func(h, _ string) string { return filepath.Join(h, ".claude", "settings.json") }},
	{"~/.config/brood/settings.toml", func(h, _ string) string { return filepath.Join(h, ".config", "brood", "settings.toml") }},
	{".claude/settings.json", func(_, p string) string { return filepath.Join(p, ".claude", "settings.json") }},
	{".claude/settings.local.json", func(_, p string) string { return filepath.Join(p, ".claude", "settings.local.json") }},
	{".brood/settings.toml", func(_, p string) string { return filepath.Join(p, ".brood", "settings.toml") }},
	{".brood/settings.local.toml", func(_, p string) string { return filepath.Join(p, ".brood", "settings.local.toml") }},
}

// writeRules writes a settings file of l's kind whose permissions.<list>
// holds rules.
func writeRules(t *testing.T, path string, isJSON bool, list string, rules []string) {
	t.Helper()
	var data string
	if isJSON {
		b, err := json.Marshal(map[string]any{"permissions": map[string]any{list: rules}})
		if err != nil {
			t.Fatal(err)
		}
		data = string(b)
	} else {
		q := make([]string, len(rules))
		for i, r := range rules {
			q[i] = fmt.Sprintf("%q", r)
		}
		data = fmt.Sprintf("[permissions]\n%s = [%s]\n", list, strings.Join(q, ", "))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRuleListsAddUp: through the real resolver, for every pair of
// settings layers (a lower and a higher one), for the deny, allow and ask
// lists, with two rules below and one above and the reverse, the effective
// list is every rule of both, the lower layer's first: no layer's decode
// overwrites what a layer below it said (a repository's one-line deny list
// once erased the user's deny rules). Deny and ask rules apply in an
// untrusted project too; allow rules there only once it is trusted.
func TestRuleListsAddUp(t *testing.T) {
	for lo := range layers {
		for hi := lo + 1; hi < len(layers); hi++ {
			for _, list := range []string{"deny", "allow", "ask"} {
				for _, n := range [][2]int{{2, 1}, {1, 2}} {
					name := fmt.Sprintf("%s<%s/%s/%d+%d", layers[lo].name, layers[hi].name, list, n[0], n[1])
					t.Run(strings.ReplaceAll(name, "/", "|"), func(t *testing.T) {
						home, project := t.TempDir(), t.TempDir()
						rules := func(l, k int) []string {
							var out []string
							for i := range k {
								out = append(out, fmt.Sprintf("Bash(l%d-%s-%d:*)", l, list, i))
							}
							return out
						}
						below, above := rules(lo, n[0]), rules(hi, n[1])
						writeRules(t, layers[lo].path(home, project), layers[lo].json(), list, below)
						writeRules(t, layers[hi].path(home, project), layers[hi].json(), list, above)
						want := slices.Concat(below, above)
						for _, trusted := range []bool{false, true} {
							src := settings.Sources{Home: home, ProjectRoot: project, Trust: settings.Trust{Force: trusted}}
							r, err := settings.Resolve(src)
							if err != nil {
								t.Fatal(err)
							}
							p := r.Settings.Permissions
							got := map[string][]string{"deny": p.Deny, "allow": p.Allow, "ask": p.Ask}[list]
							if list == "allow" && !trusted && hi >= 2 {
								// The held-back rules, each with its file
								// (what a refusal names).
								var held []trust.HeldRule
								for i, r := range want {
									l := layers[lo]
									if i >= len(below) {
										l = layers[hi]
									}
									if l.name[0] != '~' {
										held = append(held, trust.HeldRule{Rule: r, File: l.name})
									}
								}
								if !reflect.DeepEqual(r.Settings.Trust.HeldAllow, held) {
									t.Errorf("held-back allow rules %v, want %v", r.Settings.Trust.HeldAllow, held)
								}
								if lo < 2 {
									want := below // the project's held back, the user's kept
									if !slices.Equal(got, want) {
										t.Errorf("untrusted: allow = %q, want the user's %q", got, want)
									}
								}
								continue
							}
							if !slices.Equal(got, want) {
								t.Errorf("trusted=%v: %s = %q, want %q (every rule of both layers)", trusted, list, got, want)
							}
						}
					})
				}
			}
		}
	}
}

// TestMapsAndDirsAddUp: a higher layer's map-valued setting (a Claude Code
// settings.json's env, brood's pool.timeouts) sets its own keys over the
// lower layer's and keeps the others; additionalDirectories add up; and
// nothing the resolver returns shares memory with another Resolve's.
func TestMapsAndDirsAddUp(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	write := func(path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(layers[0].path(home, project), `{"env": {"A": "user", "B": "user"}, "permissions": {"additionalDirectories": ["/u1", "/u2"]}}`)
	write(layers[1].path(home, project), "[pool.timeouts]\nexplore = \"1m\"\nplan = \"2m\"\n")
	write(layers[2].path(home, project), `{"env": {"A": "project"}, "permissions": {"additionalDirectories": ["/p1"]}}`)
	write(layers[4].path(home, project), "[pool.timeouts]\nexplore = \"30s\"\n")
	src := settings.Sources{Home: home, ProjectRoot: project, Trust: settings.Trust{Force: true}}
	r, err := settings.Resolve(src)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Settings
	if want := map[string]string{"A": "project", "B": "user"}; !reflect.DeepEqual(s.ClaudeEnv, want) {
		t.Errorf("env = %v, want %v", s.ClaudeEnv, want)
	}
	if want := map[string]settings.Duration{"explore": {Duration: 30 * time.Second}, "plan": {Duration: 2 * time.Minute}}; !reflect.DeepEqual(s.Pool.Timeouts, want) {
		t.Errorf("pool.timeouts = %v, want %v", s.Pool.Timeouts, want)
	}
	if want := []string{"/u1", "/u2", "/p1"}; !slices.Equal(s.Permissions.AdditionalDirectories, want) {
		t.Errorf("additionalDirectories = %q, want %q", s.Permissions.AdditionalDirectories, want)
	}
	// Untrusted: the project's env value and directory are held back, the
	// user's are whole.
	src.Trust.Force = false
	u, err := settings.Resolve(src)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"A": "user", "B": "user"}; !reflect.DeepEqual(u.Settings.ClaudeEnv, want) {
		t.Errorf("untrusted env = %v, want the user's %v", u.Settings.ClaudeEnv, want)
	}
	if want := []string{"/u1", "/u2"}; !slices.Equal(u.Settings.Permissions.AdditionalDirectories, want) {
		t.Errorf("untrusted additionalDirectories = %q, want %q", u.Settings.Permissions.AdditionalDirectories, want)
	}
	if want := map[string]settings.Duration{"explore": {Duration: 30 * time.Second}, "plan": {Duration: 2 * time.Minute}}; !reflect.DeepEqual(u.Settings.Pool.Timeouts, want) {
		t.Errorf("untrusted pool.timeouts = %v, want %v (a shorter timeout narrows)", u.Settings.Pool.Timeouts, want)
	}
}
