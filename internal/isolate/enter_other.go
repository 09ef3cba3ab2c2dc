//go:build !linux

package isolate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/sandbox"
)

// EnterFromEnv reports a worktree child's copy; overlays need Linux and
// are never prepared here, so an overlay request is an error.
func EnterFromEnv() (Entered, error) {
	if e, ok := reentered(); ok {
		return e, nil
	}
	sandbox.TakeEnv(goLayersVar) // (no overlay here: the caches start empty)
	v, ok, err := sandbox.TakeEnv(envVar)
	if err != nil {
		return Entered{}, fmt.Errorf("isolate: %w", err)
	}
	if !ok {
		return Entered{Mode: ModeNone}, nil
	}
	var spec mountSpec
	if err := json.Unmarshal([]byte(v), &spec); err != nil {
		return Entered{}, fmt.Errorf("isolate: bad %s: %w", envVar, err)
	}
	if spec.Mode == ModeWorktree && len(spec.RO) == 0 {
		return remember(Entered{Mode: ModeWorktree, Root: spec.Root}), nil
	}
	return Entered{}, fmt.Errorf("isolate: mode %q needs Linux", spec.Mode)
}

func probeOverlayIn(context.Context, string) (ok, userxattr bool, why string) {
	return false, false, "overlay isolation needs Linux user and mount namespaces"
}

func addMountNamespace(cmd *exec.Cmd) error {
	return errors.New("isolate: overlay isolation needs Linux")
}

// Probe finds git; the overlay is never available off Linux.
func Probe(ctx context.Context) Support {
	s := Support{Why: "overlay isolation needs Linux user and mount namespaces"}
	if v, err := gitx.Version(ctx); err == nil {
		s.Git = v
		s.Worktree = true
	}
	return s
}
