package temporal

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/broodhq/brood/internal/codesnap"
)

// What a worker with no record of a task checks before a call uses it
// (the owner record, askedFor, is one worker's own): a plan's call names
// only a task of its run, and a call continues a task only from a
// transcript uploaded for that task. Neither needs trust in the store or
// the workflow: a plan's task id is derived from the workflow id its
// submitter signed, and a transcript in the store names its task in its
// first line, under its content address.

// A plan call's task id is a ULID whose 80 bits after the time are 48
// bits of SHA-256(planTaskContext + the run's workflow id) and a 32-bit
// count of the tasks the execution named so far. The time keeps ids of
// two executions of a run apart, the count those of one execution.
const (
	planTaskContext = "brood fleet plan task\x00"
	runBits         = 6 // bytes of the run's hash in a plan task id
)

// unboundError is the refusal of a task or transcript that is not the
// call's: never retried.
type unboundError struct{ msg string }

func (e *unboundError) Error() string { return e.msg }

func unbound(format string, args ...any) error {
	return &unboundError{fmt.Sprintf(format, args...)}
}

// isUnbound reports whether err refuses a task or transcript that is not
// the call's.
func isUnbound(err error) bool {
	var u *unboundError
	return errors.As(err, &u)
}

// runMark is the part of a plan task id that names its run.
func runMark(workflowID string) []byte {
	h := sha256.Sum256([]byte(planTaskContext + workflowID))
	return h[:runBits]
}

// PlanTaskID is the id of the n-th task an execution of plan run
// workflowID names, at t (the workflow's clock): what a worker checks a
// plan call's task against (taskOfRun).
//
// The count comes first, least significant byte first, and the run's mark
// last: a run's calls, handed out in the same millisecond, then differ
// from their 11th character, so a short prefix names one (with the mark
// first they shared 25 of their 26 characters and every prefix a user
// would type was ambiguous).
func PlanTaskID(workflowID string, t time.Time, n uint32) string {
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(t))
	binary.LittleEndian.PutUint32(id[6:10], n)
	copy(id[10:10+runBits], runMark(workflowID))
	return id.String()
}

// taskOfRun checks that id is a task plan run workflowID named
// (PlanTaskID), in the one spelling brood writes.
func taskOfRun(workflowID, id string) error {
	u, err := ulid.ParseStrict(id)
	if err != nil || u.String() != id {
		return unbound("%q is not a task id", id)
	}
	if !bytes.Equal(u[10:10+runBits], runMark(workflowID)) {
		return unbound("the call names task %s, which is not one plan run %s named (a plan's task ids are derived from its signed run id): a plan's call starts or continues only its own run's tasks (a run begun on workers from before this check cannot go on: run the plan again)", id, workflowID)
	}
	return nil
}

// transcriptHead is the first line of a transcript as the fleet's store
// keeps it: the task it was uploaded for, and the writer's partial change
// uploaded with it (a heartbeat names both: a retry applies that change).
// A session record of a type of its own, which a child's replay skips.
type transcriptHead struct {
	Type   string `json:"type"`
	TaskID string `json:"task_id"`
	// Change is the SHA-256 of the partial change's JSON (changeSum).
	Change string `json:"change,omitempty"`
}

// changeSum names a partial change in a transcript's first line ("":
// none).
func changeSum(c *codesnap.Result) string {
	if c == nil {
		return ""
	}
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

const transcriptHeadType = "fleet_task"

// headOf is the line a transcript of task id, uploaded with partial
// change code (nil: none), starts with in the store.
func headOf(id string, code *codesnap.Result) []byte {
	b, _ := json.Marshal(transcriptHead{Type: transcriptHeadType, TaskID: id, Change: changeSum(code)})
	return append(b, '\n')
}

// TranscriptObject is a task's transcript as a worker puts it in the
// fleet's store, with no partial change.
func TranscriptObject(id string, transcript []byte) []byte {
	return TranscriptObjectWith(id, nil, transcript)
}

// TranscriptObjectWith is a task's transcript as a worker puts it in the
// fleet's store: the line naming the task and the partial change code
// uploaded with it, then the child's transcript.
func TranscriptObjectWith(id string, code *codesnap.Result, transcript []byte) []byte {
	h := headOf(id, code)
	out := make([]byte, 0, len(h)+len(transcript))
	return append(append(out, h...), transcript...)
}

// transcriptOf is the child's transcript in obj, a transcript object from
// the store, checked to be task id's: its first line, exactly as a worker
// writes it, names that task and, when the call applies a partial change
// (code), that change. A call given none where one was uploaded (a
// finished writer's follow-up: its change landed in the submitter's tree)
// continues without it.
func transcriptOf(id string, code *codesnap.Result, ref Ref, obj []byte) ([]byte, error) {
	first, rest, ended := bytes.Cut(obj, []byte("\n"))
	var h transcriptHead
	if json.Unmarshal(first, &h) != nil || h.Type != transcriptHeadType || h.TaskID == "" {
		return nil, unbound("the transcript %s in the fleet store names no task: a worker from before transcripts named their task uploaded it, or it is no transcript; a call continues only from its own task's: run the call again", ref.Key)
	}
	if h.TaskID != id {
		return nil, unbound("the transcript %s in the fleet store is task %s's, and the call continues task %s: a call continues only from its own task's transcript", ref.Key, h.TaskID, id)
	}
	if line, _ := json.Marshal(h); !ended || !bytes.Equal(first, line) {
		return nil, unbound("the transcript %s in the fleet store does not start with the line a worker writes for task %s", ref.Key, id)
	}
	if code != nil && h.Change != changeSum(code) {
		return nil, unbound("the partial change the call continues from is not the one uploaded with task %s's transcript %s: a call continues only from its own task's change", id, ref.Key)
	}
	return rest, nil
}

// isTranscript reports whether ref names task id's transcript object for
// exactly transcript (the child's records) and partial change code,
// without reading the store.
func isTranscript(ref Ref, id string, code *codesnap.Result, transcript []byte) bool {
	h := headOf(id, code)
	if ref.Size != int64(len(h)+len(transcript)) {
		return false
	}
	s := sha256.New()
	s.Write(h)
	s.Write(transcript)
	return hex.EncodeToString(s.Sum(nil)) == ref.SHA256
}
