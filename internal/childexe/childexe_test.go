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
		if got, unversioned := SameBuild(parent, tc.child); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) || unversioned {
			t.Errorf("%s: SameBuild = %q, %v, want %q", tc.name, got, unversioned, tc.want)
		}
	}
	// A modified tree cannot be matched by its build info, even against
	// itself: the source digest must decide.
	for _, v := range []string{"v0.3.1-0.20261201120000-abcdef012345+dirty", "(devel)", ""} {
		if got, unversioned := SameBuild(info(v, "abc"), info(v, "abc")); !strings.Contains(got, "cannot be matched") || !unversioned {
			t.Errorf("version %q: SameBuild = %q, %v, want the digest to decide", v, got, unversioned)
		}
	}
	// ... but only once everything else matched.
	if got, unversioned := SameBuild(info("(devel)", ""), info("(devel)", "", "example.com/x@v1.0.0")); unversioned || !strings.Contains(got, "example.com/x") {
		t.Errorf("unversioned, other deps: SameBuild = %q, %v", got, unversioned)
	}
	// A source digest stamped at build time (scripts/build) proves one
	// source when both carry the same one; another stamp, or none beside
	// one, is another build.
	stamped := func(d string) *debug.BuildInfo {
		bi := info("(devel)", "")
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "-ldflags", Value: "-s -X " + StampVar + "=" + d})
		return bi
	}
	if got, unversioned := SameBuild(stamped("ab12"), stamped("ab12")); got != "" || unversioned {
		t.Errorf("one stamp: SameBuild = %q, %v, want the same build", got, unversioned)
	}
	if got, unversioned := SameBuild(stamped("ab12"), stamped("cd34")); unversioned || !strings.Contains(got, "-ldflags") {
		t.Errorf("two stamps: SameBuild = %q, %v, want refused", got, unversioned)
	}
	if got, unversioned := SameBuild(stamped("ab12"), info("(devel)", "")); unversioned || !strings.Contains(got, "-ldflags") {
		t.Errorf("stamp against none: SameBuild = %q, %v, want refused", got, unversioned)
	}
	unrelated := info("(devel)", "")
	unrelated.Settings = append(unrelated.Settings, debug.BuildSetting{Key: "-ldflags", Value: "-X=main.x=1"})
	if stampOf(unrelated) != "" || stampOf(stamped("ab12")) != "ab12" {
		t.Errorf("stampOf: %q, %q", stampOf(unrelated), stampOf(stamped("ab12")))
	}
	tagged := info("(devel)", "")
	tagged.Settings = append(tagged.Settings, debug.BuildSetting{Key: "CGO_ENABLED", Value: "1"})
	if got, unversioned := SameBuild(info("(devel)", ""), tagged); unversioned || !strings.Contains(got, "CGO_ENABLED") {
		t.Errorf("unversioned, other settings: SameBuild = %q, %v", got, unversioned)
	}
}

// TestFind covers the choices Find makes from the files beside the parent:
// none, one that is not executable, the same build with nothing in its
// build info naming the source (this test binary's copy: taken because it
// holds the same bytes), one whose bytes differ though its build info is
// the same (refused: nothing names its source), all falling back to the
// parent itself with the reason; and a parent that is brood-child running
// itself.
func TestFind(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // never the user's remembered verdicts
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	brood := filepath.Join(dir, "brood") // this test binary, as os.Executable is brood's
	if err := os.WriteFile(brood, exe, 0o755); err != nil {
		t.Fatal(err)
	}
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
	if c := Find(brood); c.Path != cand || !c.Lean {
		t.Errorf("the same unversioned build, same bytes, was refused: %+v", c)
	}
	// The same build info, other bytes: this binary with one byte more
	// (debug/buildinfo still reads it) is not provably the same build.
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, Name), append(exe, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(d, "brood")
	if err := os.WriteFile(b, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if c := Find(b); c.Path != b || c.Lean || !strings.Contains(c.Why, "records the source") {
		t.Errorf("other bytes: %+v, want refused", c)
	}
	if c := Find(cand); c.Path != cand || !c.Lean {
		t.Errorf("brood-child as the parent: %+v", c)
	}
}

// TestSameBuildWider: brood-fleet links the fleet's modules besides
// brood's, so only the modules both link must agree; anything else that
// tells builds apart still does.
func TestSameBuildWider(t *testing.T) {
	brood := info("v0.3.0", "abc", "github.com/spf13/cobra@v1.9.0")
	for _, tc := range []struct {
		name  string
		fleet *debug.BuildInfo
		want  string
	}{
		{"same release, the fleet's modules too", info("v0.3.0", "abc", "github.com/spf13/cobra@v1.9.0", "go.temporal.io/sdk@v1.38.0"), ""},
		{"a shared module at another version", info("v0.3.0", "abc", "github.com/spf13/cobra@v1.9.1", "go.temporal.io/sdk@v1.38.0"), "cobra"},
		{"other revision", info("v0.3.0", "abd", "go.temporal.io/sdk@v1.38.0"), "revision abd"},
	} {
		if got, unversioned := sameBuild(brood, tc.fleet, true); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) || unversioned {
			t.Errorf("%s: sameBuild(wider) = %q, %v, want %q", tc.name, got, unversioned, tc.want)
		}
	}
	if got, _ := SameBuild(brood, info("v0.3.0", "abc", "github.com/spf13/cobra@v1.9.0", "go.temporal.io/sdk@v1.38.0")); !strings.Contains(got, "go.temporal.io") {
		t.Errorf("a lean child that links more than brood: SameBuild = %q, want it refused", got)
	}
}

// TestFleetIsNotBrood: a brood-fleet beside brood that is brood itself (a
// hard or symbolic link) or a copy of it (its bytes: no Temporal SDK in its
// build info) is refused, with one line, though it is "the same build":
// brood would hand its commands to itself without end.
func TestFleetIsNotBrood(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		make func(self, cand string) error
		want string
	}{
		{"hard link", os.Link, "itself (a link)"},
		{"symbolic link", os.Symlink, "itself (a link)"},
		{"copy", func(_, cand string) error { return os.WriteFile(cand, body, 0o755) }, "links no Temporal SDK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			self, cand := filepath.Join(dir, "brood"), filepath.Join(dir, NameFleet)
			if err := os.WriteFile(self, body, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(self, cand); err != nil {
				t.Fatal(err)
			}
			c := FindNamed(self, NameFleet)
			if c.Lean || c.Path != self || !strings.Contains(c.Why, tc.want) || strings.Contains(c.Why, "\n") {
				t.Fatalf("FindNamed(%s, %s) = %+v, want refused: %q", self, NameFleet, c, tc.want)
			}
		})
	}
}
