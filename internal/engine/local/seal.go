package local

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/workflow"
)

// runSealKind is the seal kind of run.json (no other record's seal
// passes for it).
const runSealKind = "workflow-run"

// NotYoursError is a run whose run.json has no seal made with the user's
// record key: a repository shipped it (it can commit .brood/workflows/),
// or a brood from before runs were sealed made it. It is not listed, shown
// nor resumed: resuming it would run a plan the user never approved.
type NotYoursError struct{ RunID, File string }

func (e *NotYoursError) Error() string {
	return fmt.Sprintf("workflow run %s was not made by you (%s carries no seal made with your record key %s): a repository may have shipped it; not shown, not resumed: start the plan anew with brood workflow run FILE (docs/trust.md, \"Records a repository ships\")", e.RunID, e.File, taskdir.KeyPath())
}

// Unwrap makes it taskdir.ErrNotYours to errors.Is.
func (e *NotYoursError) Unwrap() error { return taskdir.ErrNotYours }

// writeRun writes a new run's plan.json and run.json: the plan and the
// inputs with every secret redacted (docs/secrets.md), and run.json, which
// names plan.json's hash (the plan the user approved), sealed with the
// user's record key (unsealed when no key can be made: the run is then
// not listed later, which the listing says). rec is left as it was: the
// run itself uses its inputs whole.
func (e *Engine) writeRun(dir string, rec runRecord, p *workflow.Plan) error {
	plan, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode %s: %w", PlanFile, err)
	}
	if e.cfg.Redact != nil {
		var v any
		if err := json.Unmarshal(plan, &v); err != nil {
			return fmt.Errorf("encode %s: %w", PlanFile, err)
		}
		v = workflow.RedactValue(v, e.cfg.Redact)
		if plan, err = json.Marshal(v); err != nil {
			return fmt.Errorf("encode %s: %w", PlanFile, err)
		}
	}
	var out bytes.Buffer
	if err := json.Indent(&out, plan, "", "  "); err != nil {
		return fmt.Errorf("encode %s: %w", PlanFile, err)
	}
	out.WriteByte('\n')
	if err := dispatch.WriteFileAtomic(filepath.Join(dir, PlanFile), out.Bytes()); err != nil {
		return err
	}
	sum := sha256.Sum256(out.Bytes())
	rec.PlanSHA256 = hex.EncodeToString(sum[:])
	if in, ok := workflow.RedactValue(map[string]any(rec.Inputs), e.cfg.Redact).(map[string]any); ok && rec.Inputs != nil {
		rec.Inputs = in
	}
	rec.Seal = ""
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode %s: %w", RunFile, err)
	}
	rec.Seal = taskdir.SealWithKey(runKind(dir), data)
	return dispatch.WriteJSON(filepath.Join(dir, RunFile), rec)
}

// runKind is run.json's seal kind bound to the real path of the
// project's workflows directory (dir is the run's): a sealed run copied
// to another project is not the user's there.
func runKind(dir string) string {
	return runSealKind + "\x00" + RealProject(filepath.Dir(dir))
}

// readRun reads run id's run.json from dir: engine.ErrNotFound when there
// is none, a *NotYoursError when its seal does not hold.
func readRun(dir, id string) (*runRecord, error) {
	file := filepath.Join(dir, RunFile)
	data, err := readRecord(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", engine.ErrNotFound, id)
	} else if err != nil {
		return nil, &NotYoursError{RunID: id, File: file} // a link, a FIFO: brood never made it
	}
	var rec runRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, &NotYoursError{RunID: id, File: file} // brood writes it whole (tmp+rename): not brood's
	}
	// The seal is checked on the record as written: numbers read as
	// their text, so encoding it again gives the same bytes.
	var check runRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&check); err != nil {
		return nil, &NotYoursError{RunID: id, File: file}
	}
	seal := check.Seal
	check.Seal = ""
	enc, err := json.Marshal(check)
	if err != nil || rec.RunID != id || !taskdir.HoldsWithKey(runKind(dir), enc, seal) {
		return nil, &NotYoursError{RunID: id, File: file}
	}
	return &rec, nil
}

// readPlan reads the plan of run rec from dir, refusing one whose bytes
// are not those the run was started with (run.json's hash).
func readPlan(dir string, rec *runRecord) (*workflow.Plan, error) {
	data, err := readRecord(filepath.Join(dir, PlanFile))
	if err != nil {
		return nil, fmt.Errorf("workflow %s: its plan.json is unreadable: %w", rec.RunID, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != rec.PlanSHA256 {
		return nil, fmt.Errorf("workflow %s: its plan.json is not the plan the run was started with (it changed since): not resumed; start the plan anew with brood workflow run FILE", rec.RunID)
	}
	var p workflow.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("workflow %s: its plan.json is unreadable: %w", rec.RunID, err)
	}
	return &p, nil
}

// maxRecord bounds run.json and plan.json as read (a plan is checked far
// below it when it starts).
const maxRecord = 64 << 20

// readRecord reads a run's record file without following a link or
// blocking on a FIFO (a repository can commit either), only a regular
// file, at most maxRecord bytes.
func readRecord(file string) ([]byte, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (brood never made it); not read", file)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err == nil && len(data) > maxRecord {
		err = fmt.Errorf("%s is over %d bytes (brood never made it); not read", file, maxRecord)
	}
	return data, err
}

// NotYours is the ids of the project's runs whose run.json carries no seal
// of the user's (NotYoursError): a listing leaves them out and says how
// many.
func NotYours(projectRoot string) []string {
	if projectRoot == "" {
		return nil
	}
	ents, _ := os.ReadDir(Root(projectRoot))
	var out []string
	for _, ent := range ents {
		if !ent.IsDir() || dispatch.CheckID(ent.Name()) != nil {
			continue
		}
		var ny *NotYoursError
		if _, err := readRun(filepath.Join(Root(projectRoot), ent.Name()), ent.Name()); errors.As(err, &ny) {
			out = append(out, ent.Name())
		}
	}
	return out
}
