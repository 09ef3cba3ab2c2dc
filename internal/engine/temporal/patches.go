package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	wf "github.com/broodhq/brood/internal/workflow"
)

// chainPatch is the temporary file a worker's chain step named in its
// conflict message (gone once the step ended): older workers' did
// (/tmp/brood-chain-N/, then the cache's chains/chain-N/); a worker's now
// names no file.
var chainPatch = regexp.MustCompile(`\S*(?:brood-chain-|chains/chain-)[0-9]+/change\.patch`)

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
	k, err := e.writeKept(ctx, *cr.Patch, file)
	if err != nil {
		c.Error = strings.Replace(c.Error, kept, "its patch was not kept in "+file+" ("+err.Error()+"); it is in the fleet's store as "+cr.Patch.Key, 1)
		return
	}
	c.Error = strings.Replace(c.Error, kept, k.message(), 1)
	c.Landed = chainPatch.ReplaceAllLiteralString(c.Landed, k.named())
}

// keptFiles are the files a not-applied call's patch was kept in: file
// what brood would have landed, held its configuration changes (and
// whatever git reads otherwise than the headers say), heldNames what
// those change.
type keptFiles struct {
	file, held       string
	hasFile, hasHeld bool
	heldNames        string
}

// heldSuffix names the held part beside the kept one: TASK.held.patch.
const heldSuffix = ".held.patch"

// writeKept writes the worker's patch (hostile: it may carry hooks and
// permissions) as the file the user is told to `git apply --3way`, less
// its configuration changes unless the agent may make them: those go to
// TASK.held.patch, headed by a warning that names them (red team 4,
// P3-3). Files kept before (a resumed run) are kept as they are (the
// store may have dropped the patch since); a kept file with no held one
// beside it (an older brood's, whole) is cut now.
func (e *Engine) writeKept(ctx context.Context, ref blobstore.Ref, file string) (*keptFiles, error) {
	k := &keptFiles{file: file, held: strings.TrimSuffix(file, ".patch") + heldSuffix}
	if names, err := heldHeader(k.held); err == nil {
		_, ferr := os.Lstat(k.file)
		k.hasFile, k.hasHeld, k.heldNames = ferr == nil, true, names
		return k, nil
	}
	data, err := keptBefore(file)
	if err != nil {
		return nil, err
	}
	if data == nil {
		if err := codesnap.CheckPatchSize(ref); err != nil {
			return nil, err
		}
		if data, err = e.cfg.Code.Blobs.ReadAll(ctx, ref); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, err
	}
	h := &isolate.Held{Kept: data}
	if !e.cfg.Code.AllowConfig {
		if h, err = isolate.HoldConfig(ctx, data); err != nil {
			return nil, err
		}
	}
	if len(h.Held) > 0 {
		k.hasHeld, k.heldNames = true, h.String()
		head := "# brood held these changes of the worker's patch back: " + k.heldNames + "\n" +
			"# They change brood's or Claude Code's configuration (hooks and permissions: programs that run on your machine),\n" +
			"# or git reads them as other files than their headers name. Read every line before you apply any of it.\n"
		if err := dispatch.WriteFileAtomic(k.held, append([]byte(head), h.Held...)); err != nil {
			return nil, err
		}
	}
	if len(h.Kept) > 0 || len(h.Held) == 0 {
		if err := dispatch.WriteFileAtomic(file, h.Kept); err != nil {
			return nil, err
		}
		k.hasFile = true
	}
	return k, nil
}

// keptBefore is the kept file's content when there is one (nil: none),
// read up to codesnap.MaxPatch.
func keptBefore(file string) ([]byte, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, codesnap.MaxPatch+1))
	if err != nil {
		return nil, err
	}
	if len(data) > codesnap.MaxPatch {
		return nil, fmt.Errorf("the kept %s is over %d MiB: move it away to keep the worker's patch again", file, codesnap.MaxPatch>>20)
	}
	if data == nil {
		data = []byte{} // there was a file
	}
	return data, nil
}

// heldHeader reads the names a held part's first line gives.
func heldHeader(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	line, _, _ := strings.Cut(string(head), "\n")
	_, names, _ := strings.Cut(line, "back: ")
	return names, nil
}

// message says where the patch is and how to apply it, and what was held
// back, in place of wf.KeptWithTask's words.
func (k *keptFiles) message() string {
	apply := "its patch is kept in " + k.file + " (apply it with: git apply --3way " + k.file + ")"
	switch {
	case !k.hasFile:
		return "its patch is held back in " + k.held + " (" + k.heldNames + "): review it before you apply any of it"
	case !k.hasHeld:
		return apply
	default:
		return apply + "; its changes to " + k.heldNames + " are held back in " + k.held + ": review them before you apply them"
	}
}

// named is the file a landing message names for the patch.
func (k *keptFiles) named() string {
	if k.hasFile {
		return k.file
	}
	return k.held
}

// keepNamed moves what a landing kept in its own state directory (the
// patch that did not apply, the configuration changes held back; under
// isolate/ with names of the apply's choosing) to the files the user is
// told of, named by the run's or the task's id: DIR/ID/ID.patch and
// DIR/ID/ID.held.patch (fleetqa4 P3: they were DIR/ID-RANDOM/isolate/
// changes.patch). ap's paths, and its conflict text, name the new files;
// a file that cannot be moved stays where it is, and named so (false:
// some did).
func keepNamed(ap *codesnap.Applied, dir, key string) bool {
	id, _, _ := strings.Cut(key, "-")
	to := filepath.Join(dir, id)
	if dispatch.CheckID(id) != nil || os.MkdirAll(to, 0o700) != nil {
		return false
	}
	moved := true
	move := func(from *string, name string) {
		if *from == "" {
			return
		}
		dst := filepath.Join(to, name)
		if os.Rename(*from, dst) != nil {
			moved = false
			return
		}
		ap.Conflict = strings.ReplaceAll(ap.Conflict, *from, dst)
		*from = dst
	}
	if ap.KeptAt == ap.Patch {
		defer func() { ap.KeptAt = ap.Patch }()
	}
	move(&ap.Patch, id+".patch")
	move(&ap.ConfigPatch, id+heldSuffix)
	move(&ap.Preimages, id+".before-landing")
	return moved
}
