package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/sandbox"
)

// The overlay probe re-executes this test binary; like brood's main, it
// must let isolate answer first.
func TestMain(m *testing.M) {
	if _, err := isolate.EnterFromEnv(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

func run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := NewCmdDoctor(nil, nil)
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append([]string{}, args...))
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("doctor %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

func TestDoctorJSONMatchesProbes(t *testing.T) {
	var r Report
	if err := json.Unmarshal([]byte(run(t, "--json")), &r); err != nil {
		t.Fatal(err)
	}
	sb := sandbox.Probe(context.Background())
	iso := isolate.Probe(context.Background())
	checks := []struct {
		name      string
		got, want any
	}{
		{"landlock", r.LandlockABI, sb.LandlockABI},
		{"userns", r.UserNamespaces, sb.UserNS},
		{"netns", r.NetworkNamespace, sb.NetNS},
		{"overlay", r.OverlayInUserNS, iso.Overlay},
		{"git", r.Git, iso.Git},
		{"bash", r.ReadOnlyBash, sb.LandlockABI > 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: doctor says %v, probe says %v", c.name, c.got, c.want)
		}
	}
	wantMode := isolate.ModeNone
	switch {
	case iso.Overlay:
		wantMode = isolate.ModeOverlay
	case iso.Worktree:
		wantMode = isolate.ModeWorktree
	}
	if r.Isolation != wantMode {
		t.Errorf("isolation %q, want %q", r.Isolation, wantMode)
	}
	if !r.OverlayInUserNS && r.Problems["overlay"] == "" {
		t.Error("no overlay but no reason given")
	}
	// A test binary has no brood-child beside it: children run the binary
	// itself, and doctor says why.
	if exe, _ := os.Executable(); r.ChildExe != exe || !strings.Contains(r.Problems["children"], "no brood-child beside") {
		t.Errorf("children run %q (%q), want %q and the reason", r.ChildExe, r.Problems["children"], exe)
	}
}

func TestDoctorText(t *testing.T) {
	out := run(t)
	t.Log("\n" + out)
	for _, want := range []string{"user namespaces", "overlay in user namespace", "landlock", "network namespace", "git", "worktree fallback", "read-only agents get Bash"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if err := NewCmdDoctor(nil, nil).Args(NewCmdDoctor(nil, nil), []string{"extra"}); err == nil {
		t.Error("doctor accepted a positional argument")
	}
}

// TestDoctorConfinementTable: the table names every class of child and
// every axis, and where this machine has Landlock and user namespaces no
// class's file system is a fallback.
func TestDoctorConfinementTable(t *testing.T) {
	var r Report
	if err := json.Unmarshal([]byte(run(t, "--json")), &r); err != nil {
		t.Fatal(err)
	}
	want := []string{"read-only", "in-place writer", "isolated writer", "fleet worker's child"}
	if len(r.Confinement) != len(want) {
		t.Fatalf("confinement table has %d classes, want %v: %+v", len(r.Confinement), want, r.Confinement)
	}
	for i, c := range r.Confinement {
		if c.Class != want[i] {
			t.Errorf("class %d is %q, want %q", i, c.Class, want[i])
		}
		for _, v := range []string{c.Filesystem, c.Syscalls, c.Capabilities, c.Cgroup, c.Limits, c.Network} {
			if v == "" {
				t.Errorf("%s: an axis is empty: %+v", c.Class, c)
			}
		}
		if r.Limits != nil && !strings.Contains(c.Limits, "memory "+r.Limits.Defaults["memory"]) {
			t.Errorf("%s: resource limits %q do not name the default memory limit %s", c.Class, c.Limits, r.Limits.Defaults["memory"])
		}
		if r.LandlockABI >= 1 && r.UserNamespaces && c.Class != "fleet worker's child" && strings.HasPrefix(c.Filesystem, "NOT HELD") {
			t.Errorf("%s: %s, on a machine with Landlock and user namespaces", c.Class, c.Filesystem)
		}
	}
	if text := run(t); !strings.Contains(text, "confinement by class of child:") || !strings.Contains(text, "in-place writer") {
		t.Errorf("brood doctor prints no confinement table:\n%s", text)
	}
}
