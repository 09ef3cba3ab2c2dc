package version_test

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/cli/version"
)

func TestVersion(t *testing.T) {
	p := clitest.NewProject(t)
	code, out, errOut := p.Brood("version")
	// A test binary records no module version and no VCS information.
	want := "brood devel (revision unknown: built without VCS information) " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("code %d, stdout %q (want %q), stderr %q", code, out, want, errOut)
	}
	code, out, _ = p.Brood("--version")
	if code != 0 || out != want {
		t.Errorf("--version: code %d, stdout %q", code, out)
	}
}

func TestStringPrefersLdflags(t *testing.T) {
	if got := version.String("v1.2.3"); !strings.HasPrefix(got, "v1.2.3 ") || !strings.HasSuffix(got, runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("String(v1.2.3) = %q", got)
	}
}

// TestFormat: the version line says what the build recorded and nothing
// more — the module version, the commit when known, "devel" and "revision
// unknown" when neither names the source (GOFLAGS=-buildvcs=false).
func TestFormat(t *testing.T) {
	rt := " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		name, ldflags string
		bi            *debug.BuildInfo
		want          string
	}{
		{"no build info", "dev", nil, "devel (revision unknown: built without VCS information)"},
		{"buildvcs=false", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel (revision unknown: built without VCS information)"},
		{"go install m@v", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"built in a repository", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201100000-0123456789ab+dirty"}, Settings: vcs}, "v0.0.0-20261201100000-0123456789ab+dirty (commit 0123456789ab, 2026-12-01T10:00:00Z, modified)"},
		{"devel with vcs", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs[:1]}, "devel (commit 0123456789ab)"},
		{"ldflags wins", "v2.0.0", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v2.0.0"},
	} {
		if got := version.Format(c.ldflags, c.bi); got != c.want+rt {
			t.Errorf("%s: %q, want %q", c.name, got, c.want+rt)
		}
	}
}
