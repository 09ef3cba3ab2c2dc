package temporal

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
)

// The signature that marks a named record final (answername.go). A
// heartbeat's signature (continuationClaim) says "this is where attempt N
// of the call got to", which every turn boundary's heartbeat says too: a
// record signed so says nothing of being final, and one who writes the
// store and reads the server's pending-activity details could copy any
// heartbeat of the call (a follow-up's first, a turn's) under the
// answer's name. A named answer is signed over a claim of its own, under
// a context no heartbeat is signed under: "the final answer of execution
// E, activity A, input digest D, task T, attempt N", with the transcript
// and change it names. A retry takes only a record whose signature
// verifies as that claim for its own execution, activity and input.

// finalSigContext separates a final answer's signature from a heartbeat's
// (workerSigContext) and any other use of a worker's key.
const finalSigContext = "brood fleet worker final answer v1\x00"

// finalClaim is what a worker signs of a final answer it names.
type finalClaim struct {
	Claim      string `json:"claim"` // always "final answer"
	Namespace  string `json:"namespace"`
	Workflow   string `json:"workflow"`
	Run        string `json:"run"`
	Activity   string `json:"activity"`
	Input      string `json:"input"` // callDigest of the activity's input
	Submitter  string `json:"submitter"`
	Task       string `json:"task"`
	Attempt    int    `json:"attempt"`
	Transcript Ref    `json:"transcript"`
	Position   int64  `json:"position"`
	Change     string `json:"change"`
}

// finalClaimOf is the signed bytes of hb as the final answer of the call
// info names (its execution, activity and input are info's: a record for
// another never verifies), by s's attempt.
func finalClaimOf(info CallInfo, hb Heartbeat, s *WorkerSig) []byte {
	b, _ := json.Marshal(finalClaim{Claim: "final answer", Namespace: info.Namespace, Workflow: info.Workflow, Run: info.Run, Activity: info.Activity,
		Input: info.Bind.Brief, Submitter: info.Submitter, Task: hb.TaskID, Attempt: s.Attempt, Transcript: hb.Transcript, Position: hb.Position, Change: s.Change})
	return append([]byte(finalSigContext), b...)
}

// signFinal signs hb as the final answer of the call info names, for
// this attempt.
func (k *WorkerKeys) signFinal(info CallInfo, hb Heartbeat) *WorkerSig {
	s := &WorkerSig{Key: k.own.Public().(ed25519.PublicKey), Attempt: info.Attempt, Run: info.Run, Change: changeSum(hb.Code), Brief: info.Bind.Brief}
	s.Sig = ed25519.Sign(k.own, finalClaimOf(info, hb, s))
	return s
}

// checkFinal reports whether s signs hb as the final answer of the call
// info names (execution, activity, input digest, submitter, task), made
// by an earlier attempt of this execution, with a worker key k trusts (its
// own, or a listed one). nil keys take nothing.
func (k *WorkerKeys) checkFinal(info CallInfo, hb Heartbeat, s *WorkerSig) error {
	if k == nil {
		return fmt.Errorf("this worker has no keys to check it with")
	}
	if s == nil || len(s.Key) != ed25519.PublicKeySize {
		return fmt.Errorf("not signed as a final answer by any worker")
	}
	fp := Fingerprint(s.Key)
	if !bytes.Equal(s.Key, k.own.Public().(ed25519.PublicKey)) && !k.trusted.trusts(s.Key) {
		return fmt.Errorf("signed by worker key %s, which is not in this worker's %s", fp, TrustedWorkersFile)
	}
	switch {
	case s.Run != info.Run:
		return fmt.Errorf("signed by worker key %s in another execution of run %s (%s)", fp, info.Workflow, s.Run)
	case s.Brief != info.Bind.Brief:
		return fmt.Errorf("signed by worker key %s for another input of the call than this one's", fp)
	case s.Attempt >= info.Attempt:
		return fmt.Errorf("signed by worker key %s for attempt %d, and attempt %d takes only an earlier attempt's answer", fp, s.Attempt, info.Attempt)
	case changeSum(hb.Code) != s.Change || !s.Result.IsZero():
		return fmt.Errorf("named with a change or result worker key %s did not sign for task %s", fp, hb.TaskID)
	case !ed25519.Verify(ed25519.PublicKey(s.Key), finalClaimOf(info, hb, s), s.Sig):
		return fmt.Errorf("not what worker key %s signed as the final answer of task %s in this execution, activity and input (a heartbeat's signature, another call's, or changed since)", fp, hb.TaskID)
	}
	return nil
}
