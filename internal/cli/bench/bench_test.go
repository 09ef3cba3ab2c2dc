package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSource: the SDK floor and issue 29's table are built from brood's
// source tree; outside one (no go.mod, or another module's) the bench says
// what it skips and that --src gives it, instead of dropping them silently.
func TestSource(t *testing.T) {
	root := t.TempDir()
	mk := func(dir, gomod string) string {
		d := filepath.Join(root, dir)
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if gomod != "" {
			if err := os.WriteFile(filepath.Join(d, "go.mod"), []byte(gomod), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	brood := mk("brood", "// brood\nmodule github.com/broodhq/brood // the runtime\n\ngo 1.26\n")
	other := mk("other", "module example.com/app\n\ngo 1.26\n")
	plain := mk("plain", "")
	for _, c := range []struct {
		name, flag, wd, want string
		missing              []string
	}{
		{name: "in brood's tree", wd: filepath.Join(brood, "sub"), want: brood},
		{name: "--src given", flag: "/src/brood", wd: plain, want: "/src/brood"},
		{name: "another module", wd: filepath.Join(other, "sub"), missing: []string{other, `"example.com/app"`, "SDK floor and issue 29's table are skipped", "--src DIR"}},
		{name: "no module", wd: filepath.Join(plain, "sub"), missing: []string{"no go.mod above", "SDK floor and issue 29's table are skipped", "--src DIR"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "no module" {
				if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
					t.Skip("a go.mod above the test's temporary directory")
				}
			}
			src, missing := source(c.flag, c.wd)
			if src != c.want {
				t.Errorf("source = %q, want %q", src, c.want)
			}
			if (missing == "") != (len(c.missing) == 0) {
				t.Errorf("missing = %q, want it to say %q", missing, c.missing)
			}
			for _, w := range c.missing {
				if !strings.Contains(missing, w) {
					t.Errorf("missing = %q, want it to say %q", missing, w)
				}
			}
		})
	}
}

// TestHelpSaysTheSourceIsNeeded: `brood bench --help` says the floor is
// built from brood's source tree and what --src is for.
func TestHelpSaysTheSourceIsNeeded(t *testing.T) {
	cmd := NewCmdBench(nil, nil)
	for _, want := range []string{"brood's source tree for\nthe SDK floor and issue 29's table", "--src"} {
		if !strings.Contains(cmd.Long, want) {
			t.Errorf("help lacks %q:\n%s", want, cmd.Long)
		}
	}
	if f := cmd.Flags().Lookup("src"); f == nil || !strings.Contains(f.Usage, "issue 29's table") {
		t.Errorf("--src's usage does not say it gives issue 29's table: %+v", f)
	}
}
