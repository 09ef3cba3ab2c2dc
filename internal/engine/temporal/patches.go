package temporal

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	wf "github.com/broodhq/brood/internal/workflow"
)

// chainPatch is the temporary file a worker's chain step named in its
// conflict message (gone once the step ended).
var chainPatch = regexp.MustCompile(`\S*brood-chain-[0-9]+/change\.patch`)

// keepPatches writes the patch of every plan call the run's tree left out
// (it conflicted with what another call wrote there) into the submitter's
// project, STATE/<run_id>/<task_id>.patch (.brood/fleet/patches/ from the
// CLI), and has the call's record name that file: the patch is otherwise
// only an object in the fleet's store, and the worker's temporary copy is
// gone (fleetqa3 P2-7).
func (e *Engine) keepPatches(ctx context.Context, res *wf.Result) {
	if res == nil || e.cfg.Code == nil || e.cfg.Code.StateDir == "" || dispatch.CheckID(res.RunID) != nil {
		return
	}
	for i := range res.Phases {
		for j := range res.Phases[i].Calls {
			e.keepPatch(ctx, res.RunID, &res.Phases[i].Calls[j])
		}
	}
}

func (e *Engine) keepPatch(ctx context.Context, run string, c *wf.CallRecord) {
	kept := wf.KeptWithTask(c.TaskID)
	if c.Status != wf.CallNotApplied || !strings.Contains(c.Error, kept) || dispatch.CheckID(c.TaskID) != nil {
		return
	}
	var cr codesnap.Result
	if json.Unmarshal(c.Code, &cr) != nil || cr.Patch == nil {
		return
	}
	file := filepath.Join(e.cfg.Code.StateDir, run, c.TaskID+".patch")
	if _, err := os.Stat(file); err != nil {
		data, err := e.cfg.Code.Blobs.ReadAll(ctx, *cr.Patch)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(file), 0o700)
		}
		if err == nil {
			err = dispatch.WriteFileAtomic(file, data)
		}
		if err != nil {
			c.Error = strings.Replace(c.Error, kept, "its patch was not kept in "+file+" ("+err.Error()+"); it is in the fleet's store as "+cr.Patch.Key, 1)
			return
		}
	}
	c.Error = strings.Replace(c.Error, kept, "its patch is kept in "+file+" (apply it with: git apply --3way "+file+")", 1)
	c.Landed = chainPatch.ReplaceAllLiteralString(c.Landed, file)
}
