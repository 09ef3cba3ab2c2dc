package codesnap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/isolate"
)

// Applied is what became of a worker's result in the submitter's tree.
type Applied struct {
	isolate.Outcome
	// BaseMoved says how the submitter's HEAD changed since Capture
	// ("" when it did not); the patch is applied all the same when every
	// hunk fits.
	BaseMoved string `json:"base_moved,omitempty"`
}

// Message is one line for the user: what was applied, or why nothing was
// and what to do.
func (a *Applied) Message() string {
	moved := ""
	if a.BaseMoved != "" {
		moved = " (" + a.BaseMoved + ")"
	}
	held := ""
	if len(a.ConfigRefused) > 0 {
		held = fmt.Sprintf("; configuration changes held back (%s): review %s and apply it with git apply if you want them",
			strings.Join(a.ConfigRefused, ", "), a.ConfigPatch)
	}
	return a.message(moved) + held
}

func (a *Applied) message(moved string) string {
	switch {
	case len(a.Refused) > 0:
		return fmt.Sprintf("refused: the worker's patch writes %s, which your Edit or Write deny rules forbid; nothing was applied (the whole patch is refused); it is kept at %s: review it",
			strings.Join(a.Refused, ", "), a.Patch)
	case len(a.Links) > 0:
		return fmt.Sprintf("the worker's patch makes symbolic link(s) pointing outside your tree, and what they point to was never part of the change; nothing was applied; it is saved at %s: %s",
			a.Patch, firstLines(a.Conflict, 3))
	case len(a.Partial) > 0:
		return fmt.Sprintf("the worker's patch failed partway into your tree%s and could NOT all be put back; it is saved at %s: %s",
			moved, a.Patch, firstLines(a.Conflict, 3))
	case a.Conflict != "":
		return fmt.Sprintf("the worker's patch does not apply to your tree%s; nothing was applied; it is saved at %s (git apply --3way %s to merge by hand): %s",
			moved, a.Patch, a.Patch, firstLines(a.Conflict, 3))
	case len(a.Files) == 0:
		return "no changes"
	case a.Merged:
		return fmt.Sprintf("applied %d file(s) by a clean three-way merge%s: %s", len(a.Files), moved, strings.Join(a.Files, ", "))
	default:
		return fmt.Sprintf("applied %d file(s)%s: %s", len(a.Files), moved, strings.Join(a.Files, ", "))
	}
}

// ApplyOptions are Apply's choices.
type ApplyOptions struct {
	// StateDir keeps the patch (on conflict it is where the user finds it)
	// and held-back configuration changes; empty means a temporary
	// directory, kept only when it holds something the user must see.
	StateDir string
	// AllowConfig lets the patch change .brood/, .claude/ and .mcp.json
	// (the agent's allow_config_changes); otherwise those changes are
	// held back in StateDir/config.patch and named.
	AllowConfig bool
	// WriteDenied says whether the submitter's Edit or Write deny rules
	// forbid a path of its tree (absolute; isolate.WriteDeniedFunc): a
	// patch that writes one is refused whole and kept, as a local
	// isolated writer's is. nil: no such rules.
	WriteDenied func(path string) bool
}

// Apply brings res back into the submitter's tree at dir: whole or not at
// all, never staged, configuration changes held back, the local isolated
// child's way (isolate.ApplyPatch). stateDir is ApplyOptions.StateDir.
func Apply(ctx context.Context, store *blobstore.Store, dir, stateDir string, snap *Snapshot, res *Result) (*Applied, error) {
	return ApplyWith(ctx, store, dir, snap, res, ApplyOptions{StateDir: stateDir})
}

// ApplyWith is Apply with all its options.
func ApplyWith(ctx context.Context, store *blobstore.Store, dir string, snap *Snapshot, res *Result, opts ApplyOptions) (*Applied, error) {
	if res == nil || res.Patch == nil {
		return &Applied{Outcome: isolate.Outcome{Applied: true}}, nil
	}
	if res.Tree != snap.Tree {
		return nil, fmt.Errorf("codesnap: the result is against tree %s, not this run's snapshot %s: refusing to apply", short(res.Tree), short(snap.Tree))
	}
	if err := CheckPatchSize(*res.Patch); err != nil {
		return nil, err
	}
	patch, err := store.ReadAll(ctx, *res.Patch)
	if err != nil {
		return nil, fmt.Errorf("codesnap: the worker's patch: %w", err)
	}
	g := gitCmd{dir: dir}
	top, err := g.line(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("codesnap: %s: %w", dir, err)
	}
	g.dir = top
	if err := ensureTree(ctx, store, g, snap); err != nil {
		return nil, err
	}
	out := &Applied{}
	head, _ := g.line(ctx, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if head != snap.Base {
		switch {
		case snap.Base == "":
			out.BaseMoved = fmt.Sprintf("HEAD is now %s; there was no commit at submit", short(head))
		case head == "":
			out.BaseMoved = fmt.Sprintf("HEAD was %s at submit and now names no commit", short(snap.Base))
		default:
			out.BaseMoved = fmt.Sprintf("HEAD moved from %s at submit to %s", short(snap.Base), short(head))
		}
	}
	o, err := isolate.ApplyPatch(ctx, isolate.ApplyOptions{Dir: top, Base: snap.Tree, Patch: patch, StateDir: opts.StateDir, AllowConfig: opts.AllowConfig,
		WriteDenied: opts.WriteDenied})
	if err != nil {
		return nil, err
	}
	out.Outcome = *o
	return out, nil
}

// MaxPatch bounds what a submitter reads of a worker's patch, into memory
// to apply it or to keep it: a worker (or whoever completed its activity)
// chooses the size.
const MaxPatch = 256 << 20

// CheckPatchSize refuses a worker's patch over MaxPatch before a byte of
// it is read (the store's reads stop at the size a reference gives).
func CheckPatchSize(ref blobstore.Ref) error {
	if ref.Size > MaxPatch {
		return fmt.Errorf("codesnap: the worker's patch %s is %d bytes, over the %d MiB a submitter reads: not read", ref.Key, ref.Size, MaxPatch>>20)
	}
	return nil
}

// ensureTree makes sure the snapshot tree is in the submitter's
// repository (it is, since Capture wrote it, unless a gc pruned it since):
// rebuilt from base and the dirty patch otherwise.
func ensureTree(ctx context.Context, store *blobstore.Store, g gitCmd, snap *Snapshot) error {
	if _, err := g.run(ctx, "cat-file", "-e", snap.Tree+"^{tree}"); err == nil {
		return nil
	}
	tmp, err := os.MkdirTemp("", "brood-tree-")
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	defer os.RemoveAll(tmp)
	gitDir, err := g.line(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	g.env = []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if err := readTree(ctx, store, g, gitDir, tmp, snap); err != nil {
		return fmt.Errorf("codesnap: rebuild the snapshot: %w", err)
	}
	tree, err := g.line(ctx, "write-tree")
	if err != nil || tree != snap.Tree {
		return fmt.Errorf("codesnap: the run's snapshot tree %s cannot be rebuilt here (got %s): %v", short(snap.Tree), short(tree), err)
	}
	return nil
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, " ")
}
