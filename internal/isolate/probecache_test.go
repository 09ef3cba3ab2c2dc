//go:build linux

package isolate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// deepRepo is a repository whose path is so long that the overlay's mount
// options (lower, upper and work directories) exceed the page the kernel
// copies them into: the probe says overlays work, and this one cannot be
// mounted.
func deepRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for range 7 {
		dir = filepath.Join(dir, strings.Repeat("d", 200))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "init")
	return dir
}

// TestOverlayMountFailureFallsBack: a child whose overlay cannot be mounted
// exits with ExitMountFailed before running anything; after OverlayFailed
// the same Isolator gives a worktree copy, which works, and the cache file
// says no overlay from then on.
func TestOverlayMountFailureFallsBack(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "probe.json")
	iso := NewCached(context.Background(), cache)
	if !iso.Support().Overlay {
		t.Skipf("no overlay on this machine (%s): nothing to fall back from; TestOverlayUnavailableFallsBack covers the worktree", iso.Support().Why)
	}
	dir := deepRepo(t)
	ws := prepare(t, iso, dir, "M", false)
	if ws.Mode != ModeOverlay {
		t.Fatalf("mode %s, want overlay (the probe's answer)", ws.Mode)
	}
	cmd := startChild(t, ws, "echo ran > ran.txt")
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != ExitMountFailed {
		t.Fatalf("child: %v, exit %d, want %d (a failed mount)", err, cmd.ProcessState.ExitCode(), ExitMountFailed)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Fatal("the child ran although its copy was not mounted")
	}
	iso.OverlayFailed("mount overlay: invalid argument")
	if s := iso.Support(); s.Overlay || !strings.Contains(s.Why, "could not mount") {
		t.Fatalf("support after the failure: %+v", s)
	}
	ws.Cleanup(context.Background())
	ws2 := prepare(t, iso, dir, "M2", false)
	if ws2.Mode != ModeWorktree {
		t.Fatalf("retry mode %s, want worktree", ws2.Mode)
	}
	runIsolated(t, ws2, "echo ran > ran.txt")
	out, err := ws2.Finish(context.Background())
	if err != nil || !out.Applied || read(t, filepath.Join(dir, "ran.txt")) != "ran\n" {
		t.Fatalf("worktree retry: %+v %v", out, err)
	}
	if again := NewCached(context.Background(), cache); !again.Cached() || again.Support().Overlay {
		t.Errorf("the cache still says overlay: cached=%v %+v", again.Cached(), again.Support())
	}
}

// TestProbeCache: the second Isolator of a process with the same kernel,
// user and binary takes the first one's answer from the file without a
// probe; an entry for another key, a stale one or garbage is a miss.
func TestProbeCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "sub", "probe.json")
	first := NewCached(context.Background(), cache)
	want := first.Support()
	if first.Cached() {
		t.Fatal("an empty cache answered")
	}
	second := NewCached(context.Background(), cache)
	if !second.Cached() || second.Support() != want {
		t.Fatalf("second: cached=%v %+v, want %+v", second.Cached(), second.Support(), want)
	}
	var e probeEntry
	b, _ := os.ReadFile(cache)
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*probeEntry) []byte{
		"other kernel":  func(e *probeEntry) []byte { e.Key = "4.0.0 " + e.Key; b, _ := json.Marshal(e); return b },
		"a day old":     func(e *probeEntry) []byte { e.At = e.At.Add(-probeCacheTTL - 1); b, _ := json.Marshal(e); return b },
		"in the future": func(e *probeEntry) []byte { e.At = e.At.Add(2 * probeCacheTTL); b, _ := json.Marshal(e); return b },
		"garbage":       func(*probeEntry) []byte { return []byte("{not json") },
	} {
		t.Run(name, func(t *testing.T) {
			c := e
			if err := os.WriteFile(cache, edit(&c), 0o600); err != nil {
				t.Fatal(err)
			}
			if i := NewCached(context.Background(), cache); i.Cached() || i.Support() != want {
				t.Errorf("cached=%v %+v, want a fresh probe's %+v", i.Cached(), i.Support(), want)
			}
		})
	}
}
