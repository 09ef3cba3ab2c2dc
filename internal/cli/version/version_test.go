package version_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/cli/version"
)

func TestVersion(t *testing.T) {
	p := clitest.NewProject(t)
	code, out, errOut := p.Brood("version")
	want := "brood dev " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
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
