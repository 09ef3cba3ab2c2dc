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
// made them so): an overlay over the user's cache at the cache's own path
// (so that go's action IDs, which hash a dependency's directory, match
// what the user compiled), what the writer's go writes there kept in the
// upper layer in its TMPDIR, which goes with it; its go pointed there
// (Var), and the path recorded (goMountedVar) for its Landlock domain's
// write rule (RestrictChild). A cache whose overlay cannot be mounted
// stays the empty directory at At, the writer's own, which its go fills
// (slower, as correct), and the user's cache stays read-only; the
// parent's doctor says where that is so (GoCacheOverlay).
func mountGoLayers(layers []goLayer) {
	var mounted []string
	for _, l := range layers {
		if (l.Var != "GOCACHE" && l.Var != "GOMODCACHE") || !filepath.IsAbs(l.At) || !filepath.IsAbs(l.Lower) {
			continue
		}
		if mountGoLayer(l) {
			os.Setenv(l.Var, l.Lower)
			mounted = append(mounted, l.Lower)
		}
	}
	b, _ := json.Marshal(goMounted{PID: os.Getpid(), Paths: mounted})
	os.Setenv(goMountedVar, string(b))
}

// mountGoLayer mounts l's overlay over l.Lower, its upper and work
// directories beside l.At.
func mountGoLayer(l goLayer) bool {
	upper, work := l.At+".u", l.At+".w"
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return false
		}
	}
	for _, ux := range []bool{true, false} {
		opts, err := overlayOptions(l.Lower, upper, work, ux)
		if err == nil {
			err = unix.Mount("overlay", l.Lower, "overlay", 0, opts)
		}
		if err == nil {
			openWork(work)
			return true
		}
	}
	return false
}
