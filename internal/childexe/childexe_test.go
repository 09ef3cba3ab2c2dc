package childexe

import (
	"fmt"
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
	tagged := info("(devel)", "")
	tagged.Settings = append(tagged.Settings, debug.BuildSetting{Key: "CGO_ENABLED", Value: "1"})
	if got, unversioned := SameBuild(info("(devel)", ""), tagged); unversioned || !strings.Contains(got, "CGO_ENABLED") {
		t.Errorf("unversioned, other settings: SameBuild = %q, %v", got, unversioned)
	}
}

// TestMain makes copies of this test binary stand in for brood-child's
// answer to DigestFlag: the true digest, or (in a directory named
// "other-source") another one, or (in "no-digest") none at all.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == DigestFlag {
		switch filepath.Base(filepath.Dir(os.Args[0])) {
		case "no-digest":
			os.Exit(2)
		case "other-source":
			fmt.Println(strings.Repeat("0", 64))
		default:
			d, err := SourceDigest()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Println(d)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFind covers the choices Find makes from the files beside the parent:
// none, one that is not executable, the same build with nothing in its
// build info naming the source (this test binary's copy: taken because it
// reports the same source digest), one built from other source or that
// reports none (refused), all falling back to the parent itself with the
// reason; and a parent that is brood-child running itself.
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
	if c := Find(brood); c.Path != cand || !c.Lean {
		t.Errorf("the same unversioned build, same source digest, was refused: %+v", c)
	}
	for sub, want := range map[string]string{"other-source": "built from other source", "no-digest": "does not report the source"} {
		d := filepath.Join(t.TempDir(), sub)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, Name), exe, 0o755); err != nil {
			t.Fatal(err)
		}
		b := filepath.Join(d, "brood")
		if c := Find(b); c.Path != b || c.Lean || !strings.Contains(c.Why, want) {
			t.Errorf("%s: %+v, want refused: %q", sub, c, want)
		}
	}
	if c := Find(cand); c.Path != cand || !c.Lean {
		t.Errorf("brood-child as the parent: %+v", c)
	}
}
