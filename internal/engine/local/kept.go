package local

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/workflow"
)

// KeptSealFile is the seal of a fleet run's kept result.json, beside it:
// written by the submitter that keeps it (engine/temporal's keep).
const KeptSealFile = "result.seal.json"

// keptSealKind is the seal kind of a kept fleet result.
const keptSealKind = "workflow-kept"

// keptSeal names the bytes of a kept result.json (their sha256) and the
// run, sealed with the user's record key under a kind bound to the
// project's real path (a sealed pair copied to another project fails).
type keptSeal struct {
	Version      int    `json:"version"`
	RunID        string `json:"run_id"`
	ResultSHA256 string `json:"result_sha256"`
	Seal         string `json:"seal,omitempty"`
}

// RealProject is the project's real path (links resolved), which the
// seals of its workflow records are bound to.
func RealProject(projectRoot string) string {
	if r, err := filepath.EvalSymlinks(projectRoot); err == nil {
		return r
	}
	a, _ := filepath.Abs(projectRoot)
	return a
}

// boundKind is kind bound to the project at projectRoot.
func boundKind(kind, projectRoot string) string {
	return kind + "\x00" + RealProject(projectRoot)
}

// KeepResult writes fleet run res's result.json in projectRoot and its
// seal (KeptSealFile), both tmp+rename: only a sealed kept result is
// listed or shown (KeptFleetResult).
func KeepResult(projectRoot string, res *workflow.Result) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", ResultFile, err)
	}
	data = append(data, '\n')
	dir := filepath.Join(taskdir.Open(projectRoot).WorkflowsDir(), res.RunID)
	if err := dispatch.WriteFileAtomic(filepath.Join(dir, ResultFile), data); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	s := keptSeal{Version: 1, RunID: res.RunID, ResultSHA256: hex.EncodeToString(sum[:])}
	enc, err := json.Marshal(s)
	if err != nil {
		return err
	}
	s.Seal = taskdir.SealWithKey(boundKind(keptSealKind, projectRoot), enc)
	return dispatch.WriteJSON(filepath.Join(dir, KeptSealFile), s)
}

// KeptFleetResult is fleet run id's result as this project keeps it (its
// submitter's copy: .brood/workflows/<id>/result.json with no run.json,
// which a local run has), and the file it was read from; nil when there is
// none, or when its seal (KeptSealFile) does not hold: a repository can
// ship the file. Read without following a link or blocking on a FIFO.
func KeptFleetResult(projectRoot, id string) (*workflow.Result, string) {
	if projectRoot == "" || dispatch.CheckID(id) != nil {
		return nil, ""
	}
	dir := filepath.Join(taskdir.Open(projectRoot).WorkflowsDir(), id)
	if _, err := os.Lstat(filepath.Join(dir, RunFile)); !errors.Is(err, fs.ErrNotExist) {
		return nil, ""
	}
	file := filepath.Join(dir, ResultFile)
	data, err := readRecord(file)
	if err != nil {
		return nil, ""
	}
	sealData, err := readRecord(filepath.Join(dir, KeptSealFile))
	if err != nil {
		return nil, ""
	}
	var s keptSeal
	if json.Unmarshal(sealData, &s) != nil {
		return nil, ""
	}
	seal := s.Seal
	s.Seal = ""
	enc, err := json.Marshal(s)
	sum := sha256.Sum256(data)
	if err != nil || s.RunID != id || s.ResultSHA256 != hex.EncodeToString(sum[:]) ||
		!taskdir.HoldsWithKey(boundKind(keptSealKind, projectRoot), enc, seal) {
		return nil, ""
	}
	var res workflow.Result
	if json.Unmarshal(data, &res) != nil || res.RunID != id {
		return nil, ""
	}
	return &res, file
}

// readResult reads a run's result.json as readRecord reads (no link, no
// FIFO, bounded) into res.
func readResult(dir string, res *workflow.Result) error {
	data, err := readRecord(filepath.Join(dir, ResultFile))
	if err != nil {
		return err
	}
	return json.Unmarshal(data, res)
}
