package isolate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
)

// TestEditHoldFor: only a literal that exists at spawn, reached through no
// link, is bound (a `dir/**` rule its directory whole); a path outside the
// tree is the Landlock domain's; every other rule is unheld, with why
// (review40 P2-A, P2-B).
func TestEditHoldFor(t *testing.T) {
	root := Resolved(t.TempDir())
	for rel, data := range map[string]string{"conf/ok.txt": "x", "migrations/001.sql": "x", "real.yaml": "x"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("real.yaml", filepath.Join(root, "config.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		deny   string
		bind   string // relative to root, "" none
		unheld string // a substring of the unheld rule, "" held
	}{
		{"Edit(conf/ok.txt)", "conf/ok.txt", ""},
		{"Write(migrations/**)", "migrations", ""},
		{"Edit(/etc/hostname)", "", ""},
		{"Edit(conf/new.txt)", "", "Edit(conf/new.txt) (absent at spawn)"},
		{"Edit(config.yaml)", "", "Edit(config.yaml) (a pattern"},
		{"Edit(./config.yaml)", "", "Edit(./config.yaml) (reached through a symbolic link)"},
		{"Edit(**/*.pem)", "", "Edit(**/*.pem) (a pattern"},
		{"Edit", "", "Edit (a rule for every path)"},
		{"Edit(./**)", "", "(it holds the whole tree)"},
		{"Read(conf/ok.txt)", "", ""},
	} {
		t.Run(tc.deny, func(t *testing.T) {
			env := &dispatch.Envelope{Workspace: root, ProjectRoot: root, Permissions: dispatch.Permissions{Deny: []string{tc.deny}}}
			h := EditHoldFor(env, root)
			var want []string
			if tc.bind != "" {
				want = []string{filepath.Join(root, tc.bind)}
			}
			if !slices.Equal(h.Paths, want) {
				t.Errorf("binds %v, want %v", h.Paths, want)
			}
			if got := h.Rules(); (tc.unheld == "") != h.Held() || !strings.Contains(got, tc.unheld) {
				t.Errorf("unheld %q, want %q", got, tc.unheld)
			}
		})
	}
	// A literal in an --add-dir directory: the view pins none of its
	// directories, so the writer is isolated (an isolated one writes none).
	add := Resolved(t.TempDir())
	if err := os.WriteFile(filepath.Join(add, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := &dispatch.Envelope{Workspace: root, ProjectRoot: root, AddDirs: []string{add},
		Permissions: dispatch.Permissions{Deny: []string{"Edit(" + filepath.Join(add, "x") + ")"}}}
	if h := EditHoldFor(env, root); len(h.Paths) != 0 || !strings.Contains(h.Rules(), "(in an added directory (--add-dir))") {
		t.Errorf("a literal in an added directory: binds %v, unheld %q", h.Paths, h.Rules())
	}
}
