package codesnap_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/isolate"
)

// viewEnv makes the test binary a child in a copy: it mounts the copy's
// overlay (isolate.EnterFromEnv, as brood's child does), then does a
// viewOp there, as a child would.
const viewEnv = "CODESNAP_TEST_VIEW"

// viewOp is what a test does in a copy, where its child would.
type viewOp struct {
	Write  map[string]string `json:"write,omitempty"` // root-relative path -> content
	Remove []string          `json:"remove,omitempty"`
	Sh     string            `json:"sh,omitempty"` // run in the copy's root
	List   bool              `json:"list,omitempty"`
	Cwd    bool              `json:"cwd,omitempty"` // say where the child started
}

type viewOut struct {
	Tree map[string][]byte `json:"tree,omitempty"` // bytes: JSON strings would mangle binary content
	Out  string            `json:"out,omitempty"`
	Cwd  string            `json:"cwd,omitempty"`
	Err  string            `json:"err,omitempty"`
}

// do performs op in root (this process's view of it).
func (op viewOp) do(root string) viewOut {
	var out viewOut
	if op.Cwd {
		out.Cwd, _ = os.Getwd()
	}
	for p, data := range op.Write {
		f := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return viewOut{Err: err.Error()}
		}
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			return viewOut{Err: err.Error()}
		}
	}
	for _, p := range op.Remove {
		if err := os.RemoveAll(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			return viewOut{Err: err.Error()}
		}
	}
	if op.Sh != "" {
		cmd := exec.Command("sh", "-ec", op.Sh)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		out.Out = string(b)
		if err != nil {
			return viewOut{Err: fmt.Sprintf("%s: %v\n%s", op.Sh, err, stderr.String())}
		}
	}
	if op.List {
		t, err := treeOf(root)
		if err != nil {
			return viewOut{Err: err.Error()}
		}
		out.Tree = map[string][]byte{}
		for k, v := range t {
			out.Tree[k] = []byte(v)
		}
	}
	return out
}

// runView is the child's side: the overlay is mounted by now.
func runView(ent isolate.Entered, spec string) int {
	var op viewOp
	if err := json.Unmarshal([]byte(spec), &op); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	b, _ := json.Marshal(op.do(ent.Root))
	os.Stdout.Write(b)
	return 0
}

// inCopy does op in co as the child sees it: through its overlay (a child
// process that mounts it) or, for a full copy, in its directory.
func inCopy(t *testing.T, co *codesnap.Checkout, op viewOp) viewOut {
	t.Helper()
	var out viewOut
	if co.Mount == nil {
		out = op.do(co.Root)
	} else {
		exe, _ := os.Executable()
		spec, _ := json.Marshal(op)
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), viewEnv+"="+string(spec))
		if err := co.Mount.Configure(cmd, nil); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("the view child: %v\n%s", err, stderr.String())
		}
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("the view child said %q: %v\n%s", b, err, stderr.String())
		}
	}
	if out.Err != "" {
		t.Fatalf("in the copy: %s", out.Err)
	}
	return out
}

// copyTree is the copy's tree as its child sees it.
func copyTree(t *testing.T, co *codesnap.Checkout) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range inCopy(t, co, viewOp{List: true}).Tree {
		out[k] = string(v)
	}
	return out
}

// writeIn writes files in the copy (root-relative paths).
func writeIn(t *testing.T, co *codesnap.Checkout, files map[string]string) {
	t.Helper()
	inCopy(t, co, viewOp{Write: files})
}

// treeOf lists a directory as path -> mode and content (links as
// targets), leaving out .git.
func treeOf(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link:" + target
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("%v:%s", info.Mode().Perm()&0o100, b)
		}
		return nil
	})
	return out, err
}

// copyModes runs f with a cache that makes full copies and, where this
// machine lets a child mount one, with one that makes overlays.
func copyModes(t *testing.T, f func(t *testing.T, overlay bool)) {
	t.Run("full", func(t *testing.T) { f(t, false) })
	sup := isolate.ProbeIn(t.Context(), t.TempDir())
	if !sup.Overlay {
		t.Logf("overlay unavailable here (%s): only full copies run", sup.Why)
		return
	}
	t.Run("overlay", func(t *testing.T) { f(t, true) })
}

// withOverlay sets the cache of h to make overlay copies (or not).
func (h *hosts) withOverlay(t *testing.T, overlay bool) *hosts {
	t.Helper()
	h.cache.Overlay = overlay
	if overlay {
		h.cache.UserXattr = isolate.ProbeIn(t.Context(), t.TempDir()).UserXattr
	}
	return h
}
