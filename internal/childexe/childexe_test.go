package childexe

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func info(version, rev string, deps ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Path: "github.com/broodhq/brood/cmd/x",
		Main: debug.Module{Path: "github.com/broodhq/brood", Version: version}}
	if rev != "" {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "vcs.revision", Value: rev})
	}
	for _, d := range deps {
		p, v, _ := strings.Cut(d, "@")
		bi.Deps = append(bi.Deps, &debug.Module{Path: p, Version: v, Sum: "h1:" + v})
	}
	return bi
}

func TestSameBuild(t *testing.T) {
	parent := info("v0.3.0", "abc", "github.com/spf13/cobra@v1.9.0", "github.com/anthropics/anthropic-sdk-go/v2@v2.15.0")
	other := info("v0.3.0", "abc", "github.com/anthropics/anthropic-sdk-go/v2@v2.15.0")
	other.GoVersion = "go1.26.7"
	for _, tc := range []struct {
		name  string
		child *debug.BuildInfo
		want  string // "" = same build; else a word the reason must hold
	}{
		{"same release, fewer deps", info("v0.3.0", "abc", "github.com/anthropics/anthropic-sdk-go/v2@v2.15.0"), ""},
		{"older release", info("v0.2.9", "abc"), "version v0.2.9"},
		{"other toolchain", other, "go1.26.7"},
		{"other revision", info("v0.3.0", "abd"), "revision abd"},
		{"dep at another version", info("v0.3.0", "abc", "github.com/anthropics/anthropic-sdk-go/v2@v2.16.0"), "anthropic-sdk-go"},
		{"dep brood lacks", info("v0.3.0", "abc", "example.com/x@v1.0.0"), "example.com/x"},
	} {
		if got := SameBuild(parent, tc.child); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: SameBuild = %q, want %q", tc.name, got, tc.want)
		}
	}
	// A modified tree cannot be matched, even against itself.
	for _, v := range []string{"v0.3.1-0.20261201120000-abcdef012345+dirty", "(devel)", ""} {
		if got := SameBuild(info(v, "abc"), info(v, "abc")); !strings.Contains(got, "cannot be matched") {
			t.Errorf("version %q: SameBuild = %q, want a refusal", v, got)
		}
	}
}

// TestFind covers the choices Find makes from the files beside the parent:
// none, one that is not executable, and one from another build (this test
// binary is a build of a modified tree, or has no version: never matched),
// all falling back to the parent itself with the reason; and a parent that
// is brood-child running itself.
func TestFind(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	brood := filepath.Join(dir, "brood")
	if c := Find(brood); c.Path != brood || c.Lean || !strings.Contains(c.Why, "no brood-child beside") {
		t.Errorf("nothing beside: %+v", c)
	}
	cand := filepath.Join(dir, Name)
	if err := os.WriteFile(cand, exe, 0o644); err != nil {
		t.Fatal(err)
	}
	if c := Find(brood); c.Path != brood || !strings.Contains(c.Why, "not an executable") {
		t.Errorf("not executable: %+v", c)
	}
	if err := os.Chmod(cand, 0o755); err != nil {
		t.Fatal(err)
	}
	if c := Find(brood); c.Path != brood || c.Lean || c.Why == "" {
		t.Errorf("a test binary beside brood was taken for its child: %+v", c)
	}
	if c := Find(cand); c.Path != cand || !c.Lean {
		t.Errorf("brood-child as the parent: %+v", c)
	}
}
