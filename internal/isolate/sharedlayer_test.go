package isolate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestSharedHiddenInTheLayer: a path every child of the root hides whole
// (the user's sandbox.hide here, /dev/shm: a host temporary directory the
// child keeps nothing in) leaves the child's own rules for the
// dispatcher's layer, built once, so no child pays a rule per entry of /
// and /dev for it; one the child's tree holds stays the child's (its
// rules are split around what it keeps), so does one in its writable
// tree (the layer would leave what it writes there unreadable), and one
// in a host temporary directory (a busy /tmp would rebuild the layer at
// every spawn). A child's child (depth 2) takes none: it is under its
// parent's domain already.
func TestSharedHiddenInTheLayer(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock: no layer")
	}
	if _, err := os.Stat("/dev/shm"); err != nil {
		t.Skip("no /dev/shm here")
	}
	home := Resolved(t.TempDir())
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	root := Resolved(t.TempDir())
	if err := taskdir.Open(root).EnsureWritable(); err != nil {
		t.Fatal(err)
	}
	own := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := own.Create(); err != nil {
		t.Fatal(err)
	}
	outside := "/nonexistent-brood-test/secret" // no host temporary directory holds it
	inTree := filepath.Join(root, "vendor", "secret")
	inTmp := filepath.Join(home, "secret")
	for _, tc := range []struct {
		name   string
		env    dispatch.Envelope
		shared []string // in the layer, not in the child's rules
		own    []string // in the child's rules
	}{
		{"read-only", dispatch.Envelope{ReadOnly: true, Depth: 1}, []string{outside, "/dev/shm"}, []string{inTree, inTmp}},
		{"in-place writer", dispatch.Envelope{Depth: 1}, []string{outside, "/dev/shm"}, []string{inTree, inTmp}},
		{"a child's child", dispatch.Envelope{ReadOnly: true, Depth: 2}, nil, []string{outside, "/dev/shm", inTree, inTmp}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			env.ProjectRoot, env.Workspace = root, root
			base := NewPolicyBase([]string{outside, inTree, inTmp})
			p, _ := ChildPolicy(&env, own.Path(), base)
			l, err := base.knownLayer(&env, own.Path(), &p, false)
			if err != nil {
				t.Fatal(err)
			}
			mine := p.HiddenPaths()
			for _, h := range tc.shared {
				if !slices.Contains(l.Paths(), h) || slices.Contains(mine, h) {
					t.Errorf("%s: in the layer %v, in the child's own rules %v; want the layer's alone", h, slices.Contains(l.Paths(), h), slices.Contains(mine, h))
				}
			}
			for _, h := range tc.own {
				if slices.Contains(l.Paths(), h) || !slices.Contains(mine, h) {
					t.Errorf("%s: in the layer %v, in the child's own rules %v; want the child's alone", h, slices.Contains(l.Paths(), h), slices.Contains(mine, h))
				}
			}
		})
	}
}

// TestSharedHiddenUnreadableThroughTheLayer: a child confined with its
// rules and the layer, as ConfineChild confines it, reads neither a file
// in /dev/shm nor one the user hides, and still reads its tree and its
// task directory: moving them to the layer keeps them hidden.
func TestSharedHiddenUnreadableThroughTheLayer(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock: no layer")
	}
	shm, err := os.CreateTemp("/dev/shm", "brood-test-*")
	if err != nil {
		t.Skip("cannot write /dev/shm here:", err)
	}
	shm.Close()
	t.Cleanup(func() { os.Remove(shm.Name()) })
	home := Resolved(t.TempDir())
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	root := Resolved(t.TempDir())
	if err := taskdir.Open(root).EnsureWritable(); err != nil {
		t.Fatal(err)
	}
	own := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := own.Create(); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(root, "main.go")
	writeFile(t, mine, "package main")
	writeFile(t, filepath.Join(own.Path(), "envelope.json"), "{}")
	env := dispatch.Envelope{ReadOnly: true, Depth: 1, ProjectRoot: root, Workspace: root}
	base := NewPolicyBase(nil)
	p, _ := ChildPolicy(&env, own.Path(), base)
	l, err := base.knownLayer(&env, own.Path(), &p, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(l.Paths(), "/dev/shm") {
		t.Fatalf("the layer (%q) does not hold /dev/shm", l.Paths())
	}
	if readAs(t, p, shm.Name()) {
		t.Errorf("the child read %s", shm.Name())
	}
	for _, r := range []string{mine, filepath.Join(own.Path(), "envelope.json")} {
		if !readAs(t, p, r) {
			t.Errorf("the child cannot read %s", r)
		}
	}
}

// TestHoldReadOnlyBuildsNoPolicy: a read-only child's mounts need its
// writable directories alone (its task directory), not its whole policy
// (every hidden path found, the host temporary directories split): the
// spawn builds that once, in ConfineChild.
func TestHoldReadOnlyBuildsNoPolicy(t *testing.T) {
	if sandbox.LandlockABI() < 1 || !sandbox.FilterAvailable() {
		t.Skip("no Landlock or syscall filter: no read-only view")
	}
	root := Resolved(t.TempDir())
	own := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := own.Create(); err != nil {
		t.Fatal(err)
	}
	env := dispatch.Envelope{ReadOnly: true, Depth: 1, ProjectRoot: root, Workspace: root}
	base := NewPolicyBase(nil)
	base.Hidden() // found once per dispatcher either way
	policy := testing.AllocsPerRun(20, func() { ChildPolicy(&env, own.Path(), base) })
	hold := testing.AllocsPerRun(20, func() {
		cmd := exec.Command("true")
		if _, err := HoldReadOnly(cmd, &env, own.Path(), base, true); err != nil {
			t.Fatal(err)
		}
	})
	if hold*4 > policy {
		t.Errorf("HoldReadOnly allocates %.0f times, the policy %.0f: it builds the policy again", hold, policy)
	}
	if w := readOnlyWritable(&env, ResolvedTaskDir(own.Path()), base); !slices.Equal(w, []string{ResolvedTaskDir(own.Path())}) {
		t.Errorf("the read-only view's writable directories are %q, want the task directory alone", w)
	}
}

// BenchmarkRestrictChildShared: a read-only child's CPU from its exec to
// its sandbox (the test binary as the child, as BenchmarkRestrictChild),
// its policy passed whole ("own": it builds every rule) against its policy
// with the paths every child hides in the dispatcher's layer, passed by
// descriptor ("layered": built once, here before the loop). go test
// ./internal/isolate -run '^$' -bench RestrictChildShared -benchtime 40x
func BenchmarkRestrictChildShared(b *testing.B) {
	if sandbox.LandlockABI() < 1 {
		b.Skip("no Landlock")
	}
	home := b.TempDir()
	root := Resolved(b.TempDir())
	td := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := td.Create(); err != nil {
		b.Fatal(err)
	}
	env := dispatch.Envelope{TaskID: td.ID(), ReadOnly: true, Depth: 1, ProjectRoot: root, Workspace: root}
	envelope := filepath.Join(td.Path(), "envelope.json")
	if err := dispatch.WriteJSON(envelope, &env); err != nil {
		b.Fatal(err)
	}
	b.Setenv("HOME", home)
	base := NewPolicyBase(nil)
	whole, needed := ChildPolicy(&env, td.Path(), base)
	layered := whole
	layered.Hidden, layered.HiddenAround = slices.Clone(whole.Hidden), slices.Clone(whole.HiddenAround)
	l, err := base.knownLayer(&env, td.Path(), &layered, false)
	if err != nil || l == nil {
		b.Fatalf("no layer: %v", err)
	}
	b.Logf("shared in the layer: %d paths; the child's own hidden: %d against %d", len(l.Paths()), len(layered.HiddenPaths()), len(whole.HiddenPaths()))
	var cpu [2]time.Duration
	for b.Loop() {
		for k, p := range []sandbox.Policy{whole, layered} {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), restrictChildEnv+"="+envelope, policyEntry(td.Path(), p, needed, true, ReadDeny{Held: true}))
			if k == 1 {
				sandbox.LayerForChild(cmd, l)
			}
			if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"mechanism":"landlock"`) {
				b.Fatalf("child: %v: %s", err, out)
			}
			cpu[k] += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
	}
	b.ReportMetric(float64(cpu[0].Microseconds())/float64(b.N)/1000, "own-child-ms/op")
	b.ReportMetric(float64(cpu[1].Microseconds())/float64(b.N)/1000, "layered-child-ms/op")
}

// TestSharedLayerNotWaitedFor: while the layer is being warmed (a run's
// first spawns), a child does not wait for it: it keeps those paths in
// its own rules, as without the layer, and starts.
func TestSharedLayerNotWaitedFor(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock: no layer")
	}
	t.Setenv("HOME", Resolved(t.TempDir()))
	t.Setenv("XDG_STATE_HOME", "")
	root := Resolved(t.TempDir())
	own := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := own.Create(); err != nil {
		t.Fatal(err)
	}
	env := dispatch.Envelope{ReadOnly: true, Depth: 1, ProjectRoot: root, Workspace: root}
	outside := "/nonexistent-brood-test/secret"
	base := NewPolicyBase([]string{outside})
	base.startWarming(root) // a WarmLayer at work
	p, _ := ChildPolicy(&env, own.Path(), base)
	l, err := base.knownLayer(&env, own.Path(), &p, false)
	base.endWarming(root)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(l.Paths(), outside) || !slices.Contains(p.HiddenPaths(), outside) {
		t.Errorf("%s: in the layer %v, in the child's own rules %v; want the child's alone while the layer is warmed", outside, slices.Contains(l.Paths(), outside), slices.Contains(p.HiddenPaths(), outside))
	}
	base.WarmLayer(&env, own.Path(), nil)
	p, _ = ChildPolicy(&env, own.Path(), base)
	if l, err = base.knownLayer(&env, own.Path(), &p, false); err != nil || !slices.Contains(l.Paths(), outside) || slices.Contains(p.HiddenPaths(), outside) {
		t.Errorf("once warmed, %s is not the layer's alone (layer %q, err %v)", outside, l.Paths(), err)
	}
}

// TestMountedOverlayChildGetsNoLayer: a child that mounts an overlay (a
// fleet worker's copy: Mount) is given no layer built by its parent,
// whose rules would not reach the overlay's files: it hides every path
// with its own rules, as an isolated overlay child does.
func TestMountedOverlayChildGetsNoLayer(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock: no layer")
	}
	t.Setenv("HOME", Resolved(t.TempDir()))
	t.Setenv("XDG_STATE_HOME", "")
	root := Resolved(t.TempDir())
	own := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := own.Create(); err != nil {
		t.Fatal(err)
	}
	env := dispatch.Envelope{ReadOnly: true, Depth: 1, ProjectRoot: root, Workspace: root}
	base := NewPolicyBase([]string{"/nonexistent-brood-test/secret"})
	done := make(chan error, 1)
	cmd := exec.Command("true")
	sandbox.OnThrowawayThread(func() {
		m := &Mount{Root: root, Upper: t.TempDir(), Work: t.TempDir(), Dir: root}
		if err := m.Configure(cmd, nil); err != nil {
			done <- err
			return
		}
		done <- ConfineChild(cmd, &env, own, nil, base)
	})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(cmd.ExtraFiles) > 0 || slices.ContainsFunc(cmd.Env, func(e string) bool { return strings.HasPrefix(e, "BROOD_SANDBOX_LAYER=") }) {
		t.Errorf("a child mounting an overlay was passed its parent's layer (%d descriptors)", len(cmd.ExtraFiles))
	}
}

// TestMountsOverlayLastWins (review27 P3-1): of two mount specs in a
// child's environment, exec passes the last; the parent judges the child
// by that one too, also where it rides a memory file (a spec covering
// thousands of Read-denied files: mountSpec.pass).
func TestMountsOverlayLastWins(t *testing.T) {
	overlay := envVar + "=" + mountSpec{Mode: ModeOverlay, Root: "/r"}.encode()
	readOnly := envVar + "=" + mountSpec{Mode: modeReadOnly, RW: []string{"/t"}}.encode()
	var many []string
	for i := range 5000 {
		many = append(many, fmt.Sprintf("/r/fixtures/client-certificate-number-%05d-for-mutual-tls.pem", i))
	}
	big := &exec.Cmd{Env: []string{"PATH=/bin", readOnly}}
	if err := (mountSpec{Mode: ModeOverlay, Root: "/r", Denied: many}).pass(big); err != nil {
		t.Fatal(err)
	}
	defer sandbox.ClosePassed(big)
	if len(big.ExtraFiles) != 1 {
		t.Fatalf("a spec of %d paths was passed in the environment (%d descriptors)", len(many), len(big.ExtraFiles))
	}
	for _, tc := range []struct {
		name string
		cmd  *exec.Cmd
		want bool
	}{
		{"overlay last", &exec.Cmd{Env: []string{"PATH=/bin", readOnly, overlay}}, true},
		{"read-only last", &exec.Cmd{Env: []string{"PATH=/bin", overlay, readOnly}}, false},
		{"none", &exec.Cmd{Env: []string{"PATH=/bin"}}, false},
		{"overlay in a memory file", big, true},
	} {
		if got := mountsOverlay(tc.cmd); got != tc.want {
			t.Errorf("%s: mountsOverlay = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestHomeStoresUnreadableThroughTheLayer (review27 P3-3): with a home
// outside the host temporary directories (here a scratch directory in
// the package's own, as a home in /home is), its credential stores,
// ~/.config/brood, the fleet cache and brood's state directory are the
// layer's, not the child's own rules, and neither a read-only nor an
// in-place child reads them; each still reads its tree and the rest of
// the home.
func TestHomeStoresUnreadableThroughTheLayer(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock: no layer")
	}
	scratch, err := os.MkdirTemp(".", ".home-outside-tmp-*")
	if err != nil {
		t.Skip("cannot make a directory outside the host temporary directories:", err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	abs, err := filepath.Abs(scratch)
	if err != nil {
		t.Fatal(err)
	}
	home := Resolved(abs)
	for _, tmp := range hostTemps(os.Getenv, nil) {
		if holds(tmp, home) {
			t.Skipf("the package's directory is in %s, a host temporary directory: its home's stores stay each child's own", tmp)
		}
	}
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", home)
	secrets := []string{
		filepath.Join(home, ".ssh", "id_rsa"),
		filepath.Join(home, ".aws", "credentials"),
		filepath.Join(home, ".config", "brood", "secret.toml"),
		filepath.Join(home, ".cache", "brood", "fleet", "jobs", "x", "main.go"),
		filepath.Join(home, ".local", "state", "brood", "known-projects"),
	}
	for _, s := range secrets {
		writeFile(t, s, "secret")
	}
	notes := filepath.Join(home, "notes.txt")
	writeFile(t, notes, "fine")
	root := Resolved(t.TempDir())
	if err := taskdir.Open(root).EnsureWritable(); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(root, "main.go")
	writeFile(t, mine, "package main")
	own := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := own.Create(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  dispatch.Envelope
	}{
		{"read-only", dispatch.Envelope{ReadOnly: true, Depth: 1}},
		{"in-place writer", dispatch.Envelope{Depth: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			env.ProjectRoot, env.Workspace = root, root
			base := NewPolicyBase(nil)
			p, _ := ChildPolicy(&env, own.Path(), base)
			l, err := base.knownLayer(&env, own.Path(), &p, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".config", "brood"), filepath.Join(home, ".cache", "brood", "fleet"), filepath.Join(home, ".local", "state", "brood")} {
				if !slices.Contains(l.Paths(), d) || slices.Contains(p.HiddenPaths(), d) {
					t.Errorf("%s is not the layer's alone (layer %v)", d, slices.Contains(l.Paths(), d))
				}
			}
			for _, s := range secrets {
				if readAs(t, p, s) {
					t.Errorf("the child read %s", s)
				}
			}
			for _, r := range []string{notes, mine} {
				if !readAs(t, p, r) {
					t.Errorf("the child cannot read %s", r)
				}
			}
		})
	}
}

// TestWarmLayerExactKey: a layer of the project built without the shared
// paths (by a child that did not wait for a warm-up) is not the warmed
// one: WarmLayer still builds the layer that holds them, and the next
// child takes it; one WarmLayer at work keeps a second from warming the
// same project, and none warms again while its layer is fresh.
func TestWarmLayerExactKey(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock: no layer")
	}
	t.Setenv("HOME", Resolved(t.TempDir()))
	t.Setenv("XDG_STATE_HOME", "")
	root := Resolved(t.TempDir())
	own := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := own.Create(); err != nil {
		t.Fatal(err)
	}
	env := dispatch.Envelope{ReadOnly: true, Depth: 1, ProjectRoot: root, Workspace: root}
	outside := "/nonexistent-brood-test/secret"
	base := NewPolicyBase([]string{outside})
	if _, _, err := base.KnownLayer(root, nil); err != nil { // a child's, without the shared paths
		t.Fatal(err)
	}
	base.WarmLayer(&env, own.Path(), nil)
	warmed := false
	for key := range base.known.byRoot {
		warmed = warmed || strings.Contains(key, outside)
	}
	if !warmed {
		t.Fatalf("WarmLayer built no layer holding %s: it took the child's, without the shared paths, for its own", outside)
	}
	p, _ := ChildPolicy(&env, own.Path(), base)
	l, err := base.knownLayer(&env, own.Path(), &p, false)
	if err != nil || !slices.Contains(l.Paths(), outside) || slices.Contains(p.HiddenPaths(), outside) {
		t.Fatalf("after the warm-up, %s: in the layer %v, in the child's own rules %v (err %v); want the layer's alone",
			outside, slices.Contains(l.Paths(), outside), slices.Contains(p.HiddenPaths(), outside), err)
	}
	if base.startWarming(root) {
		t.Error("a warm-up started while the warmed layer is fresh")
	}
	other := Resolved(t.TempDir())
	if !base.startWarming(other) {
		t.Fatal("no warm-up of another project")
	}
	if base.startWarming(other) {
		t.Error("a second warm-up of a project started while one is at work")
	}
	base.endWarming(other)
	if !base.startWarming(other) {
		t.Error("no warm-up once the one at work ended without a layer")
	}
}
