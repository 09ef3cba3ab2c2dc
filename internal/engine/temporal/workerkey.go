package temporal

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// Worker keys (docs/scale-out.md, "Who a worker trusts"): the heartbeat an
// attempt hands the next one, and a resumed call's From, name objects in
// the fleet's store (the transcript so far, the writer's partial change,
// the finished result), and anyone who can write the store and reach the
// frontend can write such an object and heartbeat it by workflow and
// activity id. A transcript's first line names its task, but nothing in
// it needs a key. So every worker signs what it hands on with a key of its
// own, over the call's namespace, run (workflow id), task and attempt and
// the objects' content addresses, and a worker continues only from what a
// worker key it trusts signed for this very call: its own, and those its
// operator listed (--trusted-worker-key, trusted_workers).

// Worker key files in KeyDir.
const (
	WorkerKeyFile       = "worker.key"
	WorkerPublicKeyFile = "worker.pub"
	TrustedWorkersFile  = "trusted_workers"
)

// workerSigContext separates a worker's signature from any other use of
// a key.
const workerSigContext = "brood fleet worker continuation v1\x00"

// WorkerSig is a worker's signature over what a heartbeat hands the next
// attempt (continuationClaim).
type WorkerSig struct {
	Key []byte `json:"key"`
	// Attempt is the signing worker's attempt of the call, and Run the
	// workflow execution it ran in: heartbeat details are taken only from
	// an earlier attempt of this very execution (a resume's From, only
	// from an earlier execution the submitter's signature names).
	Attempt int    `json:"attempt"`
	Run     string `json:"run,omitempty"`
	// Change and Result are the partial change (changeSum) and the stored
	// result the signer handed on: whoever passes the heartbeat on may
	// drop them (a follow-up of a finished writer, whose change landed,
	// continues without it; a resume never returns the old result), never
	// put others in their place.
	Change string `json:"change,omitempty"`
	Result Ref    `json:"result,omitzero"`
	// Brief is the digest of the call's input the signer ran (callBind's):
	// a single call's submitter hands a conversation on only from a run of
	// the input it sent (handOnRefusal). Empty from a worker from before.
	Brief string `json:"brief,omitempty"`
	Sig   []byte `json:"sig"`
}

// continuationClaim is what a worker signs: this call (namespace, run
// and its execution, task, and the key of the submission it ran for), its
// attempt, and every object the heartbeat names by content address (the
// partial change by changeSum, which covers its patch's and bundle's
// store digests). The submitter's key binds a conversation to whoever
// started it: another trusted submitter naming the task (a follow-up
// under the same workflow id, with its last heartbeat from the history)
// is not handed it.
type continuationClaim struct {
	Namespace  string `json:"namespace"`
	Workflow   string `json:"workflow"`
	Run        string `json:"run"`
	Submitter  string `json:"submitter"`
	Task       string `json:"task"`
	Attempt    int    `json:"attempt"`
	Transcript Ref    `json:"transcript"`
	Position   int64  `json:"position"`
	Change     string `json:"change"`
	Result     Ref    `json:"result"`
	Brief      string `json:"brief,omitempty"`
}

func claimOf(info CallInfo, hb Heartbeat, s *WorkerSig) []byte {
	b, _ := json.Marshal(continuationClaim{Namespace: info.Namespace, Workflow: info.Workflow, Run: s.Run, Submitter: info.Submitter, Task: hb.TaskID, Attempt: s.Attempt,
		Transcript: hb.Transcript, Position: hb.Position, Change: s.Change, Result: s.Result, Brief: s.Brief})
	return append([]byte(workerSigContext), b...)
}

// carries reports whether a heartbeat hands the next attempt anything
// from the store (a task id alone is checked against the call's own).
func carries(hb Heartbeat) bool {
	return !hb.Transcript.IsZero() || hb.Code != nil || !hb.Result.IsZero()
}

// WorkerKeys is a worker's own key, which signs every heartbeat it sends,
// and the other workers' keys whose continuations it takes.
type WorkerKeys struct {
	own     ed25519.PrivateKey
	trusted *Trust
}

// NewWorkerKeys is a worker's keys: own signs, trusted (nil: none but its
// own) are the other workers it continues calls of.
func NewWorkerKeys(own *Signer, trusted *Trust) *WorkerKeys {
	if trusted == nil {
		trusted = NewTrust()
	}
	return &WorkerKeys{own: own.key, trusted: trusted}
}

// Public is the worker's public key in its text form.
func (k *WorkerKeys) Public(comment string) string {
	return FormatPublicKey(k.own.Public().(ed25519.PublicKey), comment)
}

// Trusted is how many other workers' keys it trusts: its own, listed in
// the team's file with the others' (--trusted-worker-key), is not one.
func (k *WorkerKeys) Trusted() int {
	n := k.trusted.Len()
	if k.trusted.trusts(k.own.Public().(ed25519.PublicKey)) {
		n--
	}
	return n
}

// sign signs what hb hands on for the call (nil keys: a worker embedded
// in a test, which signs nothing).
func (k *WorkerKeys) sign(info CallInfo, hb *Heartbeat) {
	if k == nil {
		return
	}
	hb.Signed = nil
	if !carries(*hb) {
		return
	}
	s := &WorkerSig{Key: k.own.Public().(ed25519.PublicKey), Attempt: info.Attempt, Run: info.Run, Change: changeSum(hb.Code), Result: hb.Result, Brief: info.Bind.Brief}
	s.Sig = ed25519.Sign(k.own, claimOf(info, *hb, s))
	hb.Signed = s
}

// unsignedError says why a continuation is not taken: signed by no
// worker (key nil), by a key this worker does not trust, or not for this
// call.
type unsignedError struct {
	key       []byte
	untrusted bool
	attempt   int
	why       string
	// resumed: the attempt continues from the resume's From instead.
	resumed bool
}

func (e *unsignedError) Error() string { return e.why }

// check reports whether what hb hands on was signed, for this call
// (info's namespace, workflow and submitter, hb's task), by a worker key k
// trusts (nil keys: not checked). Heartbeat details (from false) must
// also be an earlier attempt's of this very execution: a stand-in that
// heartbeats by id an older execution's (or a later attempt's) signed
// heartbeat does not roll the call back. A resume's From (from true) is
// an earlier execution's by definition, pinned by the submitter's
// signature for a single call.
func (k *WorkerKeys) check(info CallInfo, hb Heartbeat, from bool) error {
	if k == nil || !carries(hb) {
		return nil
	}
	s := hb.Signed
	if s == nil || len(s.Key) == 0 {
		return &unsignedError{why: "signed by no worker"}
	}
	fp := Fingerprint(s.Key)
	if !bytes.Equal(s.Key, k.own.Public().(ed25519.PublicKey)) && !k.trusted.trusts(s.Key) {
		// Never advice to trust it: the key is the heartbeat's own, which
		// anyone who reaches the frontend writes.
		return &unsignedError{key: s.Key, untrusted: true, attempt: s.Attempt, why: fmt.Sprintf("signed by worker key %s, which is not in this worker's %s", fp, TrustedWorkersFile)}
	}
	switch {
	case len(s.Key) != ed25519.PublicKeySize || !ed25519.Verify(ed25519.PublicKey(s.Key), claimOf(info, hb, s), s.Sig):
		return &unsignedError{key: s.Key, attempt: s.Attempt, why: fmt.Sprintf("not what worker key %s signed for task %s of run %s and its submitter's key (changed since, or another call's)", fp, hb.TaskID, info.Workflow)}
	case !from && s.Run != info.Run:
		return &unsignedError{key: s.Key, attempt: s.Attempt, why: fmt.Sprintf("signed by worker key %s in another execution of run %s (%s), and this attempt's heartbeat details are taken only from this execution's", fp, info.Workflow, s.Run)}
	case !from && s.Attempt >= info.Attempt:
		return &unsignedError{key: s.Key, attempt: s.Attempt, why: fmt.Sprintf("signed by worker key %s for attempt %d, and attempt %d continues only an earlier attempt's", fp, s.Attempt, info.Attempt)}
	case hb.Code != nil && changeSum(hb.Code) != s.Change:
		return &unsignedError{key: s.Key, attempt: s.Attempt, why: fmt.Sprintf("handed on with a partial change worker key %s did not sign for task %s", fp, hb.TaskID)}
	case !hb.Result.IsZero() && hb.Result != s.Result:
		return &unsignedError{key: s.Key, attempt: s.Attempt, why: fmt.Sprintf("handed on with a result worker key %s did not sign for task %s", fp, hb.TaskID)}
	}
	return nil
}

// startedOver is the note a call that could not continue its earlier
// attempt's conversation carries in its result: it started over from its
// signed brief, or (local) continued from this worker's own records of
// the task instead.
func startedOver(attempt int, err error, local bool) string {
	e, _ := err.(*unsignedError)
	prev := attempt - 1
	if e != nil && e.attempt > 0 {
		prev = e.attempt
	}
	how := "started over"
	if local {
		how = "continued from this worker's own records of the task"
	}
	if e != nil && e.resumed {
		how = "continued from where its resume began"
	}
	return fmt.Sprintf("attempt %d %s: attempt %d's transcript was %v", attempt, how, prev, err)
}

// untrustedFrom is the refusal of a resumed call whose From was not
// signed by a worker this one trusts. Signed by a worker key this one
// does not trust, it is a *fromElsewhere: another worker of the queue may
// trust that key and continue the call. Any other is final.
func untrustedFrom(err error) error {
	e, _ := err.(*unsignedError)
	if e != nil && e.untrusted {
		return &fromElsewhere{unbound("the call continues a transcript %v: it continues only on a worker that trusts the worker that ran it", err)}
	}
	return unbound("the call continues a transcript %v: a worker continues only a conversation a worker it trusts signed for this very call; run the call again", err)
}

// fromElsewhere is a resumed call's From signed by a worker key this
// worker does not trust: tried again (ErrUntrusted), as a submission key
// it does not trust is (review17 S3). It wraps the refusal (isUnbound).
type fromElsewhere struct{ err error }

func (e *fromElsewhere) Error() string { return e.err.Error() }
func (e *fromElsewhere) Unwrap() error { return e.err }

// LoadWorkerKey is the worker's own key in dir, made (0600, with its
// public key beside it) the first time a worker starts; made says so.
func LoadWorkerKey(dir, comment string) (s *Signer, made bool, err error) {
	path := filepath.Join(dir, WorkerKeyFile)
	if s, err = LoadSigner(path); err != nil || s != nil {
		return s, false, err
	}
	if _, err := GenerateWorkerKey(dir, comment, false); errors.Is(err, fs.ErrExist) {
		// Another worker of this account made it meanwhile: use that one.
		s, err = LoadSigner(path)
		if err == nil && s == nil {
			err = fmt.Errorf("%s: made, then not found", path)
		}
		return s, false, err
	} else if err != nil {
		return nil, false, err
	}
	s, err = LoadSigner(path)
	if err == nil && s == nil {
		err = fmt.Errorf("%s: made, then not found", path)
	}
	return s, true, err
}

// GenerateWorkerKey makes a worker's key pair in dir (brood fleet keygen
// --worker; brood worker makes one at its first start): the private key
// (0600) and its public key line, which the fleet's other workers trust.
func GenerateWorkerKey(dir, comment string, force bool) (string, error) {
	return generateKeyAs(dir, WorkerKeyFile, WorkerPublicKeyFile, comment, force)
}

// TrustWorkers is the worker keys a worker trusts besides its own: the
// trusted_workers file in dir (missing: none) and flags (each a key or a
// file of them).
func TrustWorkers(dir string, flags []string) (*Trust, error) {
	t := NewTrust()
	if dir != "" {
		if err := t.AddFile(filepath.Join(dir, TrustedWorkersFile)); err != nil {
			return nil, err
		}
	}
	for _, f := range flags {
		if err := t.Add(f, "--trusted-worker-key"); err != nil {
			return nil, err
		}
	}
	return t, nil
}
