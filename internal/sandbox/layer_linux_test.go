package sandbox

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLayerHidesEveryWayIn: a Layer built once hides its paths from a
// child, whichever way the child is confined: from the thread that
// starts it (RestrictForChild), or by the child itself after mounting,
// from the descriptor it inherited (LayerForChild), in place or by
// re-executing; from the programs it starts too, and none of them holds
// the descriptor. What the layer does not hide stays readable.
func TestLayerHidesEveryWayIn(t *testing.T) {
	if landlockABI() < 1 {
		t.Skip("kernel has no Landlock")
	}
	tree := t.TempDir()
	for name, text := range map[string]string{"other/.brood/s": "LAYER-SECRET\n", "other/README": "VISIBLE\n"} {
		p := filepath.Join(tree, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := BuildLayer([]string{filepath.Join(tree, "other", ".brood")})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	probe := "cat " + tree + "/other/.brood/s " + tree + "/other/README 2>&1; bash -c 'cat " + tree + "/other/.brood/s' 2>&1; ls -l /proc/$$/fd | grep -c landlock; true"
	for _, tc := range []struct {
		name string
		env  []string
		base bool
	}{
		{"parent thread", nil, false},
		{"after mounts", nil, true},
		{"after mounts, re-exec", []string{forceReexecEnv + "=1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{ReadOnly: true, Writable: []string{t.TempDir()}, Layer: l}
			pol, _ := json.Marshal(p)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(append(os.Environ(), childEnv+"="+string(pol), childCmdEnv+"="+probe), tc.env...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if tc.base {
				mnt := t.TempDir()
				cmd.Env = append(cmd.Env, mountFirstEnv+"="+mnt)
				AddNamespaces(cmd, syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS, []uintptr{unix.CAP_SYS_ADMIN})
				LayerForChild(cmd, l)
			}
			errc := make(chan error, 1)
			OnThrowawayThread(func() {
				var entry string
				var err error
				if tc.base {
					entry, err = BaseForChild(p)
				} else {
					entry, _, _, err = RestrictForChild(p)
				}
				if err != nil {
					errc <- err
					return
				}
				cmd.Env = append(cmd.Env, entry)
				errc <- StartMapped(cmd, cmd.Start)
			})
			if err := <-errc; err != nil {
				t.Fatalf("start: %v", err)
			}
			res := childResultOf(t, cmd.Wait(), stdout.String(), stderr.String())
			if res.code != 0 || !strings.Contains(res.stderr, "VISIBLE") {
				t.Fatalf("exit %d; the child did not read what the layer leaves readable:\n%s", res.code, res.stderr)
			}
			if strings.Contains(res.stderr, "LAYER-SECRET") {
				t.Errorf("the child or its program read what the layer hides:\n%s", res.stderr)
			}
			if lines := strings.Split(strings.TrimSpace(res.stderr), "\n"); lines[len(lines)-1] != "0" {
				t.Errorf("the child's program holds the layer's descriptor:\n%s", res.stderr)
			}
		})
	}
}

// TestLayerRefusesOtherDescriptor: a child told its layer is on a
// descriptor that is no Landlock ruleset fails to confine itself, rather
// than start without the layer.
func TestLayerRefusesOtherDescriptor(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t.Setenv(layerEnv, strconv.Itoa(int(f.Fd())))
	if _, err := takeLayer(Policy{}); err == nil || !strings.Contains(err.Error(), "not a Landlock ruleset") {
		t.Fatalf("takeLayer on %s: %v, want a refusal", os.DevNull, err)
	}
}

// TestLayerLetsTheChildMoveFilesBetweenItsDirectories: every Landlock
// layer handles REFER (a link or rename into another directory) whether
// it says so or not, so a layer granting it nowhere refused every `git
// mv` and `ln a/x b/x` in the child's own writable tree with EXDEV
// (review22 P2-1). With the layer the child still moves its own files.
func TestLayerLetsTheChildMoveFilesBetweenItsDirectories(t *testing.T) {
	if landlockABI() < 2 {
		t.Skip("no Landlock REFER right on this kernel")
	}
	tree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "other", ".brood"), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := BuildLayer([]string{filepath.Join(tree, "other", ".brood")})
	if err != nil || l == nil {
		t.Fatalf("BuildLayer: %v, %v", l, err)
	}
	w := t.TempDir()
	for _, f := range []string{"a/x", "a/y"} {
		if err := os.MkdirAll(filepath.Join(w, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(w, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The layer stacked from the starting thread, as ConfineChild does.
	p := Policy{Writable: []string{w}, Layer: l}
	pol, _ := json.Marshal(Policy{Writable: p.Writable})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(pol), childCmdEnv+"=cd "+w+" && ln a/x b/x && mv a/y b/y && echo MOVED >&2")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	errc := make(chan error, 1)
	OnThrowawayThread(func() {
		entry, _, applied, err := RestrictForChild(p)
		if err == nil && !applied {
			err = errors.New("RestrictForChild applied nothing")
		}
		if err != nil {
			errc <- err
			return
		}
		cmd.Env = append(cmd.Env, entry)
		errc <- cmd.Start()
	})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	res := childResultOf(t, cmd.Wait(), stdout.String(), stderr.String())
	if !strings.Contains(res.stderr, "MOVED") {
		t.Fatalf("the child could not link or rename between its own directories under the layer: %s", res.stderr)
	}
}
