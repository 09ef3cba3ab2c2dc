package isolate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/tool"
)

// TestReadDenied: what a child's Read deny rules hide, and when they
// cannot be held (the child's Bash is then checked per command).
func TestReadDenied(t *testing.T) {
	ws := Resolved(t.TempDir())
	outside := Resolved(t.TempDir())
	for rel, data := range map[string]string{
		"secrets/k": "s", ".env": "e", "a/b/.env": "e", "conf/x.pem": "p", "conf/ok.txt": "o", "README.md": "r",
	} {
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "real.pem"), []byte("p"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "real.pem"), filepath.Join(ws, "conf", "link.pem")); err != nil {
		t.Fatal(err)
	}
	j := func(rel string) string { return filepath.Join(ws, rel) }
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home")
	}
	home = tool.ResolveLinks(home)
	for _, tc := range []struct {
		name  string
		deny  []string
		limit int
		held  bool
		want  []string // among the paths
		not   []string // not among them
		why   string
	}{
		{"no Read deny", []string{"Bash(rm:*)", "Edit(secrets/**)"}, 100, true, nil, []string{j("secrets")}, ""},
		{"anchored directory", []string{"Read(secrets/**)"}, 100, true, []string{j("secrets")}, []string{j(".env")}, ""},
		{"a literal that does not exist", []string{"Read(./nope/x.env)"}, 0, true, []string{j("nope/x.env")}, nil, ""},
		{"a name at any depth", []string{"Read(.env)"}, 100, true, []string{j(".env"), j("a/b/.env")}, []string{j("README.md")}, ""},
		{"a wildcard, through a link", []string{"Read(**/*.pem)"}, 100, true,
			[]string{j("conf/x.pem"), j("conf/link.pem"), filepath.Join(outside, "real.pem")}, []string{j("conf/ok.txt")}, ""},
		{"the home, with no walk", []string{"Read(~/.aws/**)"}, 0, true, []string{filepath.Join(home, ".aws")}, nil, ""},
		{"all of Read", []string{"Read"}, 100, false, nil, nil, "a deny rule for all of Read"},
		{"a walk too large", []string{"Read(.env)"}, 3, false, nil, nil, "more than 3 entries"},
		{"the workspace itself", []string{"Read(" + ws + ")"}, 100, false, nil, nil, "which the child needs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &dispatch.Envelope{Workspace: ws, Permissions: dispatch.Permissions{Deny: tc.deny}}
			got := readDenied(env, nil, tc.limit)
			if got.Held != tc.held || !strings.Contains(got.Why, tc.why) {
				t.Fatalf("held %v (%q), want %v (%q)", got.Held, got.Why, tc.held, tc.why)
			}
			for _, w := range tc.want {
				if !slices.Contains(got.Paths, w) {
					t.Errorf("%s not hidden: %v", w, got.Paths)
				}
			}
			for _, n := range tc.not {
				if slices.Contains(got.Paths, n) {
					t.Errorf("%s hidden: %v", n, got.Paths)
				}
			}
		})
	}
}

// TestChildPolicyHidesReadDenies: a read-only child's policy hides what
// its Read deny rules match, and says when it cannot.
func TestChildPolicyHidesReadDenies(t *testing.T) {
	ws := Resolved(t.TempDir())
	if err := os.MkdirAll(filepath.Join(ws, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		deny   string
		hidden bool
		held   bool
	}{
		{"Read(secrets/**)", true, true},
		{"Read", false, false},
	} {
		env := &dispatch.Envelope{ReadOnly: true, Workspace: ws, Permissions: dispatch.Permissions{Deny: []string{tc.deny}}}
		p, _, rd := ChildPolicyReads(env, t.TempDir(), NewPolicyBase(nil))
		if got := slices.Contains(p.Hidden, filepath.Join(ws, "secrets")); got != tc.hidden || rd.Held != tc.held {
			t.Errorf("%s: hidden %v held %v, want %v %v", tc.deny, got, rd.Held, tc.hidden, tc.held)
		}
	}
}
