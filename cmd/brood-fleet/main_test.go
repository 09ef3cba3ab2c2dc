package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/childexe"
)

// build builds pkg into dir with the source digest stamp (as scripts/build
// does: one stamp pairs brood with the binaries beside it).
func build(t *testing.T, dir, pkg, stamp string) string {
	t.Helper()
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-ldflags", "-X "+childexe.StampVar+"="+stamp, "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// TestBroodHandsFleetCommandsToBroodFleet runs the real binaries: brood
// does not link the fleet, so `brood fleet keygen` is done by brood-fleet
// beside it (the key is made, the command line and environment handed
// over whole); a brood-fleet of another build is refused as a foreign
// brood-child is, and so is one that is a link to brood (which would hand
// the command to itself without end); without one brood says in one line what is missing
// and how to install it. Nothing is made in either case.
func TestBroodHandsFleetCommandsToBroodFleet(t *testing.T) {
	paired, foreign, alone, linked := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	brood := build(t, paired, "github.com/broodhq/brood/cmd/brood", "aaaa")
	build(t, paired, "github.com/broodhq/brood/cmd/brood-fleet", "aaaa")
	build(t, foreign, "github.com/broodhq/brood/cmd/brood-fleet", "bbbb")
	for _, dir := range []string{foreign, alone, linked} {
		if err := os.Link(brood, filepath.Join(dir, "brood")); err != nil {
			t.Fatal(err)
		}
	}
	// brood-fleet a link to brood: the same stamped build, but brood itself.
	if err := os.Symlink(filepath.Join(linked, "brood"), filepath.Join(linked, "brood-fleet")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir string
		ok        bool
		want      string // in stderr
	}{
		{"paired", paired, true, "private key"},
		{"another build", foreign, false, "brood-fleet is not the same build as"},
		{"brood itself", linked, false, "itself (a link), not brood-fleet"},
		{"missing", alone, false, "no brood-fleet beside " + filepath.Join(alone, "brood") + " (install them together: go install github.com/broodhq/brood/cmd/...@latest)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			cmd := exec.Command(filepath.Join(tc.dir, "brood"), "fleet", "keygen", "--comment", "handed over")
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "HOME="+home)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			pub, readErr := os.ReadFile(filepath.Join(home, ".config", "brood", "fleet", "submitter.pub"))
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr.String())
			}
			if tc.ok {
				if err != nil || readErr != nil || !strings.Contains(string(pub), "handed over") || !strings.Contains(stdout.String(), "handed over") {
					t.Fatalf("brood fleet keygen: %v; key %q (%v); stdout %q, stderr %q", err, pub, readErr, stdout.String(), stderr.String())
				}
				return
			}
			if err == nil || readErr == nil {
				t.Fatalf("brood fleet keygen ran without a paired brood-fleet (exit %v, key %q)", err, pub)
			}
			if n := strings.Count(strings.TrimSpace(stderr.String()), "\n"); n != 0 {
				t.Errorf("the error is %d lines, want one:\n%s", n+1, stderr.String())
			}
		})
	}
}

// TestLinksTheFleet: brood-fleet is what links the Temporal fleet.
func TestLinksTheFleet(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/broodhq/brood/cmd/brood-fleet").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range []string{"github.com/broodhq/brood/internal/root/fleetlink", "go.temporal.io/sdk/client", "github.com/broodhq/brood/internal/cli"} {
		if !strings.Contains("\n"+string(out), "\n"+p+"\n") {
			t.Errorf("brood-fleet does not link %s", p)
		}
	}
}
