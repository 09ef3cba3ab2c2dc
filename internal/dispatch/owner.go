package dispatch

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/taskdir"
)

// Owner is the parent's own record of what a task is: which agent and model,
// whether it is a fork, what isolation was asked for, its depth and brief.
// It lives in a records directory out of every sandboxed child's reach
// (unlike the task directory, which the child writes), so a resume and a
// listing can trust it. Version 0 records (before the model and depth were
// kept) lack the fields marked v1; a resume then takes them from the
// registry and this process, never from the envelope.
type Owner struct {
	Version     int    `json:"version,omitempty"`
	TaskID      string `json:"task_id"`
	Agent       string `json:"agent"`
	Fork        bool   `json:"fork,omitempty"`
	Isolation   string `json:"isolation,omitempty"`
	Description string `json:"description,omitempty"`
	Brief       string `json:"brief"`

	Model         string    `json:"model,omitempty"`  // v1: the model the parent chose
	Effort        string    `json:"effort,omitempty"` // v1
	ParentTaskID  string    `json:"parent_task_id,omitempty"`
	SourceAgent   string    `json:"source_agent,omitempty"`
	Depth         int       `json:"depth,omitempty"`     // v1
	Workspace     string    `json:"workspace,omitempty"` // v1
	Created       time.Time `json:"created,omitzero"`
	System        string    `json:"system,omitempty"`         // v1, a verbatim fork's system prompt
	HistoryPolicy string    `json:"history_policy,omitempty"` // v1, a fork's
	// Context is the background the Task call gave beside the brief (its
	// CONTEXT section), kept so that a resume rebuilds the same prompt.
	Context string `json:"context,omitempty"`
	// Session is the root transcript's id when the root dispatched it
	// (brood tasks tree --session).
	Session string `json:"session,omitempty"`
	// CallID is the tool_use id of the Task call that asked for it: a
	// parent continued after it was killed tells the model which task its
	// unanswered call started (brood run -c).
	CallID string `json:"call_id,omitempty"`
	// Asker is who asked for the task, as the call named it (call.Spec's
	// Parent: "workflow RUN" for a plan's call): a fleet worker continues
	// a task for a plan's call only when that plan asked for it.
	Asker string `json:"asker,omitempty"`
	// Submitter is who a fleet worker ran the task for (call.Spec's
	// Submitter: the submission's key and workflow): the worker continues
	// the task only for the same.
	Submitter string `json:"submitter,omitempty"`
	// Seal is brood's HMAC of the record under the user's record key
	// (taskdir.RecordKey), in the project's own records: one without a
	// valid seal was not made by this user's brood (a repository can
	// commit .brood/records) and is never listed as theirs nor resumed.
	Seal string `json:"seal,omitempty"`
}

const ownerSealKind = "owner"

// OwnerPath is where a task's Owner record lives in the records directory
// dir.
func OwnerPath(dir, id string) string { return filepath.Join(dir, id+".json") }

// OwnerVersion is the version of the Owner records this build writes.
const OwnerVersion = 1

// Verdict is the parent's judgement of one run of a task: the status it
// decided, whether it accepted the child's result, and why not. It is the
// parent's record (beside the Owner record), written once per run after
// verification, and what listings, `tasks output` and TaskOutput show: a
// rejected result never reads as trusted later, from any process.
type Verdict struct {
	TaskID   string   `json:"task_id"`
	Run      int      `json:"run"` // 0 for the first run, then one per resume
	Status   string   `json:"status"`
	Accepted bool     `json:"accepted"`
	Reasons  []string `json:"reasons,omitempty"` // why it was rejected
	// Concerns are the edge guardrails' findings, whatever their policy.
	Concerns []string `json:"concerns,omitempty"`
	// Rejected is the reason when guardrails whose policy is reject
	// rejected the result (Status is then rejected): the follow-up a resume
	// starts from.
	Rejected string `json:"rejected,omitempty"`
	// Config is what became of the child's changes to brood's and Claude
	// Code's configuration (refused, undone, allowed), one line each.
	Config []string `json:"config,omitempty"`
	// ReadDeny is the parent's word that the kernel did not hold the
	// child's Read deny rules, and what that means (isolate's
	// ReadDeny.ParentNote, the Task result's Note), for `tasks show`.
	ReadDeny string `json:"read_deny,omitempty"`
	// Error is the parent's account of how the run ended when the child's
	// own does not hold (killed, failed to parse, no space left).
	Error    string `json:"error,omitempty"`
	KilledBy string `json:"killed_by,omitempty"` // lifeguard | timeout | cancel | user | signal
	// ResultSHA256 is the hash of result.json as judged: a later rewrite
	// (by a leftover process) shows as a rejection, not as the result.
	ResultSHA256 string `json:"result_sha256,omitempty"`
	// FilesChanged is the parent's own account of what an accepted child
	// changed, where it is not the child's claim: an in-place writer's
	// (the parent's walks before and after it) or an isolated one's (its
	// patch). A later reading of the task shows it as files_changed.
	FilesChanged []string `json:"files_changed,omitempty"`
	// Refs are the git refs an in-place writer made, moved or deleted
	// (RefChanges: a branch, a tag, refs/stash, HEAD), one line each.
	Refs []string `json:"refs_changed,omitempty"`
	// Patch is what became of the change of a child that worked on a
	// copy of the tree: "applied", PatchNotApplied (it is not in the
	// tree: a done child's task then reads not-applied), or "".
	Patch   string      `json:"patch,omitempty"`
	Usage   model.Usage `json:"usage"` // the run's tokens, descendants included
	Decided time.Time   `json:"decided"`
}

// PatchNotApplied is a Verdict's Patch for a change that did not land in
// the tree (call.PatchNotApplied).
const PatchNotApplied = "not-applied"

// PatchPartlyApplied is a Verdict's Patch for a change whose landing
// failed partway and could not put back all it wrote: part of it is in
// the tree. The run is then failed, never done.
const PatchPartlyApplied = "partly-applied"

// Kill records that a person stopped a task (`brood tasks kill`). It is
// written by the killing process into the project's records, before any
// signal, so the task's owner and every listing say who stopped it.
type Kill struct {
	TaskID string    `json:"task_id"`
	By     string    `json:"by"`  // user
	Via    string    `json:"via"` // brood tasks kill
	At     time.Time `json:"at"`
}

// KilledByUser is the Verdict.KilledBy of a task a person stopped.
const KilledByUser = "user"

// KilledByBrood is a Kill's By when brood itself stopped a task whose
// parent had died (to put back an in-place writer's guard).
const KilledByBrood = "brood"

// Records is the project's records directory (.brood/records).
func Records(projectRoot string) taskdir.Records { return taskdir.Open(projectRoot).Records() }

// OwnersDir is the path of the project's records directory.
func OwnersDir(projectRoot string) string { return Records(projectRoot).Path() }

// WriteOwner records o (synced, tmp+rename).
// In the project's own records it is sealed (Owner.Seal).
func WriteOwner(r taskdir.Records, o Owner) error {
	o.Version = OwnerVersion
	if err := SealOwner(r, &o); err != nil {
		return err
	}
	return r.WriteOwner(o.TaskID, o)
}

// SealOwner sets o's seal when r is the project's own records (else it
// leaves o as it is): call it last before writing o.
func SealOwner(r taskdir.Records, o *Owner) error {
	if !r.Sealed() {
		return nil
	}
	key, err := taskdir.RecordKey()
	if err != nil {
		// No state directory to keep a key in (a read-only HOME): the
		// task runs, its record unsealed, and a listing leaves it out,
		// saying so with the key's path (review43 P2-2). A delegation
		// never fails for want of a seal.
		o.Seal = ""
		return nil
	}
	o.Seal = ""
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	o.Seal = taskdir.Seal(key, ownerSealKind, data)
	return nil
}

// ReadOwner reads task id's Owner record from r. In the project's own
// records one whose seal does not hold is taskdir.ErrNotYours.
func ReadOwner(r taskdir.Records, id string) (*Owner, error) {
	var o Owner
	if err := r.ReadOwner(id, &o); err != nil {
		return nil, err
	}
	if r.Sealed() {
		seal := o.Seal
		o.Seal = ""
		data, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		key, kerr := taskdir.RecordKey()
		if kerr != nil || !taskdir.SealHolds(key, ownerSealKind, data, seal) {
			return nil, fmt.Errorf("owner record %s: %w", r.OwnerPath(id), taskdir.ErrNotYours)
		}
		o.Seal = seal
	}
	return &o, nil
}

// RecordKill writes the Kill record of task id.
func RecordKill(projectRoot, id, via string) error {
	return Records(projectRoot).WriteKill(id, Kill{TaskID: id, By: KilledByUser, Via: via, At: time.Now().UTC()})
}

// ReadKill returns the Kill record of task id if a person stopped it after
// since (a kill of an earlier run does not count).
func ReadKill(projectRoot, id string, since time.Time) *Kill {
	var k Kill
	if Records(projectRoot).ReadKill(id, &k) != nil || k.TaskID != id || k.At.Before(since) {
		return nil
	}
	return &k
}
