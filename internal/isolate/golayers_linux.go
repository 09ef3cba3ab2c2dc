package isolate

import (
	"encoding/json"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/sandbox"
)

// takeGoLayers takes the writer's Go cache layers from the environment
// (goLayersVar), so that no tool sees them; none when there are none or
// they cannot be read.
func takeGoLayers() []goLayer {
	v, ok, err := sandbox.TakeEnv(goLayersVar)
	var layers []goLayer
	if !ok || err != nil || json.Unmarshal([]byte(v), &layers) != nil {
		return nil
	}
	return layers
}

// mountGoLayers mounts each of a writer's Go caches (goLayer) in its own
// mount namespace, whose mounts are private already (the caller's view
// made them so): the user's cache read through it, what the writer's go
// writes there kept in the upper layer in its TMPDIR, which goes with it.
// A cache whose overlay cannot be mounted stays the empty directory at
// At, the writer's own, which its go fills (slower, as correct); the
// parent's doctor says where that is so (GoCacheOverlay).
func mountGoLayers(layers []goLayer) {
	for _, l := range layers {
		if !filepath.IsAbs(l.At) || !filepath.IsAbs(l.Lower) {
			continue
		}
		upper, work := l.At+".u", l.At+".w"
		made := true
		for _, d := range []string{l.At, upper, work} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				made = false
			}
		}
		if !made {
			continue
		}
		for _, ux := range []bool{true, false} {
			opts, err := overlayOptions(l.Lower, upper, work, ux)
			if err == nil {
				err = unix.Mount("overlay", l.At, "overlay", 0, opts)
			}
			if err == nil {
				openWork(work)
				break
			}
		}
	}
}
