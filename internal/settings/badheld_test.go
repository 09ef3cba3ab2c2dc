package settings_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/settings"
)

// TestBadProjectValueIsAnErrorTrustedOrNot (known gap): a value that is no
// value (project_files.children = "bogus", a negative byte count, a mode
// that does not exist, a store that is no URL) in the project's settings
// is an error naming the key, the file and its line and what to write
// instead, whether the project is trusted or not. Untrusted, it was taken
// for a loosening and held back in silence: the user never learnt the
// file was wrong, and trusting the project then broke every run. A valid
// loosening is still held with its notice (TestGateHoldsBackLoosening).
func TestBadProjectValueIsAnErrorTrustedOrNot(t *testing.T) {
	for _, tc := range []struct {
		name, project, key, advice string
	}{
		{"children", "[project_files]\nchildren = \"bogus\"\n", "project_files.children", "not one of writers, all, none"},
		{"max_bytes", "[project_files]\nmax_bytes = -5\n", "project_files.max_bytes", "negative"},
		{"child_max_bytes", "[project_files]\nchild_max_bytes = -1\n", "project_files.child_max_bytes", "negative"},
		{"permissions.mode", "[permissions]\nmode = \"yolo\"\n", "permissions.mode", "not one of default, acceptEdits, bypassPermissions, plan"},
	} {
		for _, trusted := range []bool{false, true} {
			name := tc.name + map[bool]string{false: " untrusted", true: " trusted"}[trusted]
			t.Run(name, func(t *testing.T) {
				src, _ := newFixture(t, "", tc.project, nil)
				src.Trust.Force = trusted
				_, _, err := settings.Load(src)
				if err == nil {
					t.Fatalf("no error for %s", tc.project)
				}
				for _, want := range []string{tc.key, ".brood/settings.toml:2", tc.advice} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
			})
		}
	}
}

// TestEveryClaudeModeRuns: a project's .claude/settings.json defaultMode
// that Claude Code accepts never stops a run, trusted or not: dontAsk (a
// tightening brood implements) applies untrusted; manual is default; auto
// (a classifier brood has not) is a warning and the layers below' mode.
// A bad mode in brood's own file is still an error
// (TestBadProjectValueIsAnErrorTrustedOrNot).
func TestEveryClaudeModeRuns(t *testing.T) {
	for _, tc := range []struct{ mode, want, warn string }{
		{"dontAsk", "dontAsk", ""},
		{"plan", "plan", ""},
		{"default", "default", ""},
		{"manual", "default", ""},
		{"auto", "default", "does not implement"},
	} {
		for _, trusted := range []bool{false, true} {
			t.Run(tc.mode+map[bool]string{false: " untrusted", true: " trusted"}[trusted], func(t *testing.T) {
				src, f := newFixture(t, "", "", nil)
				dir := filepath.Join(f.project, ".claude")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"permissions": {"defaultMode": "`+tc.mode+`"}}`), 0o644); err != nil {
					t.Fatal(err)
				}
				src.Trust.Force = trusted
				s, w, err := settings.Load(src)
				if err != nil {
					t.Fatalf("defaultMode %s stops the run: %v", tc.mode, err)
				}
				if s.Permissions.Mode != tc.want {
					t.Errorf("mode %q, want %q", s.Permissions.Mode, tc.want)
				}
				if tc.warn != "" && !strings.Contains(fmt.Sprint(w), tc.warn) {
					t.Errorf("warnings %v do not say %q", w, tc.warn)
				}
			})
		}
	}
}
