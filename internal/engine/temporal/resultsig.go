package temporal

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
)

// Signed results (docs/scale-out.md, "Who a submitter trusts"): anyone who
// reaches the frontend can complete a call's activity (a poller on its
// task queue, or RespondActivityTaskCompletedById) or its workflow with a
// result of their making: a patch the submitter would land in the user's
// tree, an answer the parent model would act on. So a worker signs every
// result it returns with its own key (workerkey.go), over the call
// (namespace, workflow, execution, task, attempt, the key of the
// submission it ran for) and the result's content (resultDigest), and the
// submitter takes a result only when a worker key it trusts signed it for
// this very call (ResultTrust.check): its own worker key and those in its
// user's trusted_workers, never a project's.

// resultSigContext separates a result's signature from any other use of
// a worker key.
// v2: the signed part covers the worker's figures (usage, attempts, the
// worker whose child ran it) too. v3: the claim names the call the
// result answers too (ResultSig's Call, Seq and Brief: callBind).
const resultSigContext = "brood fleet worker result v3\x00"

// resultSigContextV2 is a result signature of a worker from before v3,
// which names no call of the plan (an unbound result: callBind).
const resultSigContextV2 = "brood fleet worker result v2\x00"

// ResultSig is a worker's signature over a call's result (CallOutput.Sig).
type ResultSig struct {
	Key []byte `json:"key"`
	// Worker is the signer's identity as it names itself (host:pid): for
	// the messages, covered by the signature.
	Worker  string `json:"worker,omitempty"`
	Attempt int    `json:"attempt"`
	Run     string `json:"run"`
	// Call, Seq and Brief name the call the result answers (v3, callBind):
	// the plan call's key and number the workflow passed, and the digest
	// of the call's whole input. Empty in a v1 or v2 signature.
	Call  string `json:"call,omitempty"`
	Seq   int    `json:"seq,omitempty"`
	Brief string `json:"brief,omitempty"`
	Sig   []byte `json:"sig"`
}

// callBind is the call a result answers, as its worker signs it (v3):
// whoever completes a plan's workflow otherwise chooses which call of the
// plan a genuine result is taken for (review25 P1-8: two results swapped
// between calls, one ballot copied onto every ballot key of a votes
// phase). The workflow compares it with the call it scheduled
// (resultGate.take), the submitter a record's key with it
// (Engine.recordRefusal).
type callBind struct {
	// Call is the plan call's key (CallInput.Key; "": a single call).
	Call string
	// Seq is the call's number in its run's execution (CallInput.Seq).
	Seq int
	// Brief is the SHA-256 of the call's whole input (callDigest): the
	// agent, prompt and options, the tree, the continuation, the key and
	// number.
	Brief string
}

// bindOf is the call in names, as its worker signs it.
func bindOf(in CallInput) callBind {
	return callBind{Call: in.Key, Seq: in.Seq, Brief: callDigest(in)}
}

// bind is the call s names (zero: a v1 or v2 signature).
func (s *ResultSig) bind() callBind {
	return callBind{Call: s.Call, Seq: s.Seq, Brief: s.Brief}
}

// resultClaim is what a worker signs of a result.
type resultClaim struct {
	Namespace string `json:"namespace"`
	Workflow  string `json:"workflow"`
	Run       string `json:"run"`
	Submitter string `json:"submitter"`
	Task      string `json:"task"`
	Attempt   int    `json:"attempt"`
	Worker    string `json:"worker"`
	Result    string `json:"result"`
	// v3: the call the result answers (callBind).
	Call  string `json:"call,omitempty"`
	Seq   int    `json:"seq,omitempty"`
	Brief string `json:"brief,omitempty"`
}

// signedPart is the part of a result a signature covers: its task, agent
// and status, its answer (summary, text, structured output, error,
// failures), the files it says it changed and its change (the
// codesnap.Result: the patch's and bundle's store refs and SHA-256), and
// the worker's own figures: the call's usage (every attempt's turns, as
// its transcript carries them), its attempts as the worker knows them and
// the worker whose child ran it. Left out: what the workflow and the
// submitter add on the way (the call's duration in the text's tag, the
// patch's landing, the queued and run times, which the submitter takes
// from the server's history: takeTimes), which a submitter never takes
// from a result (takeCall).
type signedPart struct {
	signedAnswer
	Usage    model.Usage `json:"usage"`
	Attempts int         `json:"attempts"`
	Worker   string      `json:"worker"`
}

// signedAnswer is what a v1 signature covers: a result without the
// worker's figures.
type signedAnswer struct {
	TaskID   string          `json:"task_id"`
	Agent    string          `json:"agent"`
	Status   string          `json:"status"`
	Summary  string          `json:"summary"`
	Error    string          `json:"error"`
	Output   json.RawMessage `json:"output,omitempty"`
	Failures []string        `json:"failures,omitempty"`
	Files    []string        `json:"files,omitempty"`
	Text     string          `json:"text"`
	Code     json.RawMessage `json:"code,omitempty"`
}

// durationAttrs are the result tag's durations, which the workflow writes
// after the worker signed (callDuration).
// Only a Go duration's text is left out: any other value is signed.
var durationAttrs = regexp.MustCompile(` (last-attempt-child-duration|duration)="(?:[0-9.]+(?:ns|us|µs|ms|s|m|h))+"`)

// resultSigContextV1 is a result signature of a worker from before v2,
// which covers none of the worker's figures (legacyResult).
const resultSigContextV1 = "brood fleet worker result v1\x00"

// resultDigest is the SHA-256 of what a signature covers of r.
func resultDigest(r *call.Result) string {
	return resultDigestOf(r, true)
}

// resultDigestOf is resultDigest, with the worker's figures (v2) or
// without them (v1).
func resultDigestOf(r *call.Result, figures bool) string {
	text := r.Text
	if i := bytes.IndexByte([]byte(text), '\n'); i >= 0 {
		text = durationAttrs.ReplaceAllString(text[:i], "") + text[i:]
	} else {
		text = durationAttrs.ReplaceAllString(text, "")
	}
	a := signedAnswer{TaskID: r.TaskID, Agent: r.Agent, Status: r.Status, Summary: r.Summary, Error: r.Error,
		Output: compact(r.Output), Failures: r.Failures, Files: r.FilesChanged, Text: text, Code: compact(r.Code)}
	var b []byte
	if figures {
		b, _ = json.Marshal(signedPart{signedAnswer: a, Usage: r.Usage, Attempts: r.Attempts, Worker: r.Worker})
	} else {
		b, _ = json.Marshal(a)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// compact is raw JSON without its layout (a round trip through the
// server's payloads keeps the bytes, but never trust it to).
func compact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// Signature versions: v1 (the answer), v2 (and the worker's figures), v3
// (and the call it answers).
const (
	sigV1 = 1 + iota
	sigV2
	sigV3
)

func resultClaimOf(ns, workflow, submitter string, r *call.Result, s *ResultSig) []byte {
	return resultClaimVersion(ns, workflow, submitter, r, s, sigV3)
}

// resultClaimVersion is what a signature of version v signs.
func resultClaimVersion(ns, workflow, submitter string, r *call.Result, s *ResultSig, v int) []byte {
	c := resultClaim{Namespace: ns, Workflow: workflow, Run: s.Run, Submitter: submitter, Task: r.TaskID,
		Attempt: s.Attempt, Worker: s.Worker, Result: resultDigestOf(r, v >= sigV2)}
	ctx := resultSigContext
	switch v {
	case sigV1:
		ctx = resultSigContextV1
	case sigV2:
		ctx = resultSigContextV2
	default:
		c.Call, c.Seq, c.Brief = s.Call, s.Seq, s.Brief
	}
	b, _ := json.Marshal(c)
	return append([]byte(ctx), b...)
}

// sigVersion is the version of s over r for the call (namespace, workflow,
// submitter) that verifies (0: none does). A v3 signature names its call,
// so a v1 or v2 one is tried only when it names none.
func sigVersion(ns, workflow, submitter string, r *call.Result, s *ResultSig) int {
	if s == nil || len(s.Key) != ed25519.PublicKeySize {
		return 0
	}
	vs := []int{sigV3, sigV2, sigV1}
	if s.bind() != (callBind{}) {
		vs = vs[:1]
	}
	for _, v := range vs {
		if ed25519.Verify(ed25519.PublicKey(s.Key), resultClaimVersion(ns, workflow, submitter, r, s, v), s.Sig) {
			return v
		}
	}
	return 0
}

// signResult signs out's result for the call (nil keys: a worker
// embedded in a test, which signs nothing), naming the call info.Bind.
func (k *WorkerKeys) signResult(info CallInfo, worker string, out *CallOutput) {
	if k == nil || out == nil {
		return
	}
	s := &ResultSig{Key: k.own.Public().(ed25519.PublicKey), Worker: worker, Attempt: info.Attempt, Run: info.Run,
		Call: info.Bind.Call, Seq: info.Bind.Seq, Brief: info.Bind.Brief}
	s.Sig = ed25519.Sign(k.own, resultClaimOf(info.Namespace, info.Workflow, info.Submitter, &out.Result, s))
	out.Sig = s
}

// ResultTrust is a submitter's allowlist of worker keys: the results it
// takes from the fleet.
type ResultTrust struct {
	trust *Trust
	// from names where the allowlist is, for the refusals.
	from string
	// memo is the signatures one command verified already (nil: none
	// kept).
	memo *sigMemo
}

// sigMemo is the result signatures one command of a submitter verified
// (sigVersion): ed25519 is pure, so a signature the replay's workflow
// code verified is not verified again by the submitter's own check of
// the same result for the same call (verifyResults). Keyed by the
// digest of everything sigVersion reads.
type sigMemo struct {
	mu sync.Mutex
	v  map[[sha256.Size]byte]int
	// hits counts the verifications it spared.
	hits int
}

func newSigMemo() *sigMemo { return &sigMemo{v: map[[sha256.Size]byte]int{}} }

// sigVersion is the package's sigVersion, remembered (nil m: not).
func (m *sigMemo) sigVersion(ns, workflow, submitter string, r *call.Result, s *ResultSig) int {
	if m == nil || s == nil {
		return sigVersion(ns, workflow, submitter, r, s)
	}
	b, err := json.Marshal(struct {
		NS, Workflow, Submitter string
		R                       *call.Result
		S                       *ResultSig
	}{ns, workflow, submitter, r, s})
	if err != nil {
		return sigVersion(ns, workflow, submitter, r, s)
	}
	k := sha256.Sum256(b)
	m.mu.Lock()
	v, ok := m.v[k]
	if ok {
		m.hits++
	}
	m.mu.Unlock()
	if ok {
		return v
	}
	v = sigVersion(ns, workflow, submitter, r, s)
	m.mu.Lock()
	m.v[k] = v
	m.mu.Unlock()
	return v
}

// withMemo is rt remembering in m (nil rt: nil).
func (rt *ResultTrust) withMemo(m *sigMemo) *ResultTrust {
	if rt == nil {
		return nil
	}
	c := *rt
	c.memo = m
	return &c
}

// NewResultTrust is a submitter's allowlist of worker keys (nil trust:
// none); from says where the user adds one.
func NewResultTrust(trust *Trust, from string) *ResultTrust {
	if trust == nil {
		trust = NewTrust()
	}
	return &ResultTrust{trust: trust, from: from}
}

// SubmitterWorkerTrust is a submitter's allowlist: its user's own worker
// key in dir (a worker this account runs) and the keys in the
// trusted_workers file there (brood fleet trust-worker adds them), which
// must be the user's and writable by no one else. A project's settings
// never add one.
func SubmitterWorkerTrust(dir string) (*ResultTrust, error) {
	t, err := TrustWorkers(dir, nil)
	if err != nil {
		return nil, err
	}
	if s, err := LoadSigner(filepath.Join(dir, WorkerKeyFile)); err == nil && s != nil {
		_ = t.addLine(s.Public(), filepath.Join(dir, WorkerKeyFile))
	}
	return NewResultTrust(t, filepath.Join(dir, TrustedWorkersFile)), nil
}

// resultCall is the call a submitter waited for: where its result must
// have been signed.
type resultCall struct {
	Namespace, Workflow, Run, Submitter, Task string
}

// check is nil when out's result was signed for call by a worker key rt
// trusts (nil rt: not checked); else the one-line refusal. What it
// accepts (resultDigest, the contexts, the execution rule) is part of a
// plan workflow's determinism where the workflow runs it: a change needs
// its own version branch (workflow.GetVersion, checkedResultsVersion)
// and a replay test (TestPlanWithCheckedResultsV1Replays).
func (rt *ResultTrust) check(c resultCall, out *CallOutput) error {
	if rt == nil {
		return nil
	}
	r := &out.Result
	s := out.Sig
	if r.TaskID != c.Task {
		return fmt.Errorf("the result that came back for task %s names task %q: it was not taken", c.Task, printable(r.TaskID))
	}
	switch r.Status {
	case dispatch.StatusFailed, dispatch.StatusKilled, dispatch.StatusCancelled:
		if s == nil {
			// An ending with nothing to act on (failed, killed, cancelled:
			// never landed, never done), which the workflow itself makes
			// of a failed or cancelled activity: whoever reaches the
			// frontend can end a call so anyway.
			return nil
		}
	}
	if s == nil || len(s.Key) == 0 {
		return fmt.Errorf("the result of task %s is signed by no brood worker: something else completed the call on Temporal (anyone who reaches its frontend can), or a brood worker from before signed results did (a brood worker older than this one signs nothing: upgrade it); it was not taken", r.TaskID)
	}
	fp := Fingerprint(s.Key)
	if !rt.trust.trusts(s.Key) {
		return fmt.Errorf("the result of task %s is signed by worker key %s (worker %q), which you do not trust: it was not taken; compare that key with the one your fleet's worker printed at its start (brood worker: worker key ...): whoever completed the call chose the key in this message; only if they are the same, trust it with: brood fleet trust-worker '%s'", r.TaskID, fp, printable(s.Worker), FormatPublicKey(ed25519.PublicKey(s.Key), ""))
	}
	v := rt.memo.sigVersion(c.Namespace, c.Workflow, c.Submitter, r, s)
	switch {
	case v == 0:
		return fmt.Errorf("the result of task %s is not what worker key %s (worker %q) signed for this call: changed since, or another call's; it was not taken", r.TaskID, fp, printable(s.Worker))
	case c.Run != "" && s.Run != c.Run:
		return fmt.Errorf("the result of task %s was signed by worker key %s in another execution of %s (%s): it was not taken", r.TaskID, fp, c.Workflow, s.Run)
	}
	if v == sigV1 {
		// A worker from before v2 (a result kept from then): its answer
		// is signed, its figures are not, and are not shown.
		r.Usage, r.Attempts, r.Worker = model.Usage{}, 0, ""
	}
	return nil
}

// printable is a worker's claimed name cut to printable text.
func printable(s string) string {
	out := refusers(nil, s)
	if len(out) == 0 {
		return ""
	}
	return out[0]
}

// refusedResult is a call whose result the submitter did not take: failed
// with why, its change (if any) not applied; the parent model sees why,
// never the refused answer nor its figures (usage, attempts, worker:
// whoever completed the call wrote them).
func refusedResult(r call.Result, why error) call.Result {
	return call.Result{TaskID: r.TaskID, Agent: r.Agent, Status: dispatch.StatusFailed, Error: why.Error()}
}

// taken is a result the submitter takes as signed: its own landing not
// yet said (Patch is the submitter's to write, never the completer's),
// and named for the worker whose child ran it, as signed (the signer's
// own name when the result names none).
func taken(r call.Result, s *ResultSig) call.Result {
	r.Patch = ""
	if r.Worker == "" && s != nil {
		r.Worker = s.Worker
	}
	return r
}

// TrustWorker adds the worker keys arg gives (a key's line, or a file of
// them) to the trusted_workers file in dir (made 0600 in a 0700 dir): the
// workers whose results this account takes, and whose continuations its
// own worker takes (brood fleet trust-worker). It returns the lines added
// (a key already there is not added again).
func TrustWorker(dir, arg string) ([]string, error) {
	in := NewTrust()
	if err := in.Add(arg, "brood fleet trust-worker"); err != nil {
		return nil, err
	}
	file := filepath.Join(dir, TrustedWorkersFile)
	have := NewTrust()
	if err := have.AddFile(file); err != nil && !strings.Contains(err.Error(), "no public key in it") {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var added []string
	for k := range in.keys {
		if have.trusts([]byte(k)) {
			continue
		}
		added = append(added, FormatPublicKey(ed25519.PublicKey(k), ""))
	}
	slices.Sort(added)
	if len(added) == 0 {
		return nil, nil
	}
	data := old
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	data = append(data, strings.Join(added, "\n")+"\n"...)
	if err := writePrivate(file, data, true); err != nil {
		return nil, err
	}
	return added, nil
}
