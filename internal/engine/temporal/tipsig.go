package temporal

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	wf "github.com/broodhq/brood/internal/workflow"
)

// Signed tips (docs/scale-out.md, "Who a submitter trusts"): a plan run's
// tree is built by its chain steps on the workers, and whoever completes
// the run's workflow writes the tip the submitter lands. So the chain step
// signs the tip it built with its worker key, over the run (namespace,
// workflow, execution, the key of the submission it ran for), the step
// (the writer's task and the attempt) and the tip (tree and base), and the
// submitter lands a tip only when a worker key it trusts signed it for
// this very execution (Engine.takeTip).

// tipSigContext separates a tip's signature from any other use of a
// worker key: v1 signs the tree and the step that made it; v2 signs with
// them the writers whose changes are in it (TipSig.Tasks).
const (
	tipSigContext   = "brood fleet worker chain tip v1\x00"
	tipSigContextV2 = "brood fleet worker chain tip v2\x00"
	// v3 signs with them the tree the run's chain started from (Root)
	// and the step's outcome as its worker words it (Step).
	tipSigContextV3 = "brood fleet worker chain tip v3\x00"
)

// TipSig is a worker's signature over a run's tip (ChainOutput.Sig,
// RunInput.TipSig).
type TipSig struct {
	Key []byte `json:"key"`
	// Worker is the signer's identity as it names itself (host:pid).
	Worker  string `json:"worker,omitempty"`
	Task    string `json:"task"`
	Attempt int    `json:"attempt"`
	Run     string `json:"run"`
	// V is the claim's version: 2 signs Tasks; 0 or 1, a tip a worker
	// signed before (it proves the tree is one a step of the execution
	// made, not which writers' changes are in it).
	V int `json:"v,omitempty"`
	// Tasks are the writers whose changes are in the tip, sorted: the
	// ones the previous tip's signature (checked by the step's worker for
	// this execution) named, and the step's own.
	Tasks []string `json:"tasks,omitempty"`
	// Root (v3) is the tree the execution's chain started from: the tree
	// the first step was handed unvouched (the run's start), carried by
	// every step that builds on a tip signed in the execution; the
	// submitter lands a tip only when it is its own start (takeTip).
	Root string `json:"root,omitempty"`
	// Step (v3) is what became of the change of Task in this step, as
	// its worker words it (codesnap.Chained.Message): the record's landed.
	Step string `json:"step,omitempty"`
	Sig  []byte `json:"sig"`
}

// tipClaim is what a worker signs of a tip.
type tipClaim struct {
	Namespace string   `json:"namespace"`
	Workflow  string   `json:"workflow"`
	Run       string   `json:"run"`
	Submitter string   `json:"submitter"`
	Task      string   `json:"task"`
	Attempt   int      `json:"attempt"`
	Worker    string   `json:"worker"`
	Tree      string   `json:"tree"`
	Base      string   `json:"base"`
	Format    string   `json:"format"`
	Snapshot  string   `json:"snapshot"`
	Tasks     []string `json:"tasks,omitempty"` // v2
	Root      string   `json:"root,omitempty"`  // v3
	Step      string   `json:"step,omitempty"`  // v3
}

func tipClaimOf(ns, workflow, submitter string, tip *codesnap.Snapshot, s *TipSig) []byte {
	snap, _ := json.Marshal(tip)
	c := tipClaim{Namespace: ns, Workflow: workflow, Run: s.Run, Submitter: submitter, Task: s.Task,
		Attempt: s.Attempt, Worker: s.Worker, Tree: tip.Tree, Base: tip.Base, Format: tip.ObjectFormat, Snapshot: string(compact(snap))}
	ctx := tipSigContext
	if s.V >= 2 {
		ctx, c.Tasks = tipSigContextV2, append([]string{}, s.Tasks...)
	}
	if s.V >= 3 {
		ctx, c.Root, c.Step = tipSigContextV3, s.Root, s.Step
	}
	b, _ := json.Marshal(c)
	return append([]byte(ctx), b...)
}

// signTip signs the tip a chain step built (nil keys or tip: nothing),
// with the writers whose changes are in it (tasks), the tree its chain
// started from (root) and the step's outcome (step).
func (k *WorkerKeys) signTip(info CallInfo, worker, task string, tip *codesnap.Snapshot, tasks []string, root, step string) *TipSig {
	if k == nil || tip == nil {
		return nil
	}
	s := &TipSig{Key: k.own.Public().(ed25519.PublicKey), Worker: worker, Task: task, Attempt: info.Attempt, Run: info.Run, V: 3, Tasks: tasks, Root: root, Step: step}
	s.Sig = ed25519.Sign(k.own, tipClaimOf(info.Namespace, info.Workflow, info.Submitter, tip, s))
	return s
}

// checkTip is nil when s signs tip for the execution run of workflow
// ("": any of its executions), submitted by the key submitter, with a
// worker key rt trusts (nil rt: not checked); else the one-line refusal.
func (rt *ResultTrust) checkTip(ns, workflow, run, submitter string, tip *codesnap.Snapshot, s *TipSig) error {
	if rt == nil {
		return nil
	}
	if s == nil || len(s.Key) == 0 {
		return fmt.Errorf("the run's tree (tree %s) is signed by no brood worker: something else completed the run on Temporal (anyone who reaches its frontend can), or a brood worker from before signed trees did (a brood worker older than this one signs nothing: upgrade it); it was not landed", tip.Tree)
	}
	fp := Fingerprint(s.Key)
	if !rt.trust.trusts(s.Key) {
		return fmt.Errorf("the run's tree is signed by worker key %s (worker %q), which you do not trust: it was not landed; compare that key with the one your fleet's worker printed at its start (brood worker: worker key ...): whoever completed the run chose the key in this message; only if they are the same, trust it with: brood fleet trust-worker '%s', then brood workflow resume %s", fp, printable(s.Worker), FormatPublicKey(ed25519.PublicKey(s.Key), ""), workflow)
	}
	switch {
	case len(s.Key) != ed25519.PublicKeySize || !ed25519.Verify(ed25519.PublicKey(s.Key), tipClaimOf(ns, workflow, submitter, tip, s), s.Sig):
		return fmt.Errorf("the run's tree is not what worker key %s (worker %q) signed for this run: changed since, or another run's; it was not landed", fp, printable(s.Worker))
	case run != "" && s.Run != run:
		return fmt.Errorf("the run's tree was signed by worker key %s in another execution of %s (%s): it was not landed", fp, workflow, s.Run)
	}
	return nil
}

// takeTip is the tip of the execution run that out says it left, as the
// submitter lands it: own (the input this submitter signed and started
// the execution with) with out's tip when a worker key it trusts signed
// that tip for the execution, or when it is own's tip already (nothing
// chained since). Else own's tip is kept (nothing of out's lands) and the
// refusal says why, the refused tree kept for the user as a refused
// patch is.
func (e *Engine) takeTip(ctx context.Context, own RunInput, out RunInput, run string, checked bool) (RunInput, error) {
	in, err := e.checkedTip(ctx, own, out, run, checked)
	if err != nil {
		return own, fmt.Errorf("%v%s", err, e.keepTip(ctx, own, out.Tip))
	}
	return in, nil
}

// checkedTip is takeTip keeping nothing (workflow show). checked: the
// replayed workflow made these very checks of the tip (tipsChecked), so
// they are not made again.
func (e *Engine) checkedTip(ctx context.Context, own RunInput, out RunInput, run string, checked bool) (RunInput, error) {
	got := out.Tip
	had := own.Tip
	if had == nil {
		had = own.Code
	}
	if got == nil {
		return own, nil
	}
	var err error
	if !checked {
		err = e.cfg.Workers.checkTip(e.cfg.Namespace, own.RunID, run, e.fingerprint(), got, out.TipSig)
	}
	if err == nil && !checked && own.Workers != nil && e.cfg.Workers != nil {
		err = ownRoot(own.RunID, had, out.TipSig)
		if err != nil && e.landedHere(ctx, own.RunID, got) {
			// The tree this checkout landed for the run already, after
			// checking it: nothing of it is new here (a second resume
			// of a keyless run, whose last execution started from a
			// tip this submitter took, not from its own start).
			err = nil
		}
	}
	if had != nil && got.Tree == had.Tree {
		// Nothing chained since, or writers whose changes cancel out: a
		// tip signed with its list keeps it (notInTip).
		if err == nil && out.TipSig != nil {
			own.Tip, own.TipSig = got, out.TipSig
		}
		return own, nil
	}
	if err != nil {
		return own, err
	}
	own.Tip, own.TipSig = got, out.TipSig
	return own, nil
}

// tipsChecked: the replayed workflow of r checked the tip it came back
// with as checkedTip would (checkTip, ownRoot), so checkedTip need not:
// its history has the checked-tips marker (and the result gate's), the
// tip was signed in this very execution (a tip a step took there: the
// workflow's checkStep took it, never one its start input carried), and
// the workflow checked it on checkedTip's own terms (own: the execution's
// input as this submitter signed it) — the same run, namespace and
// submitter, the tree own started the execution from as its root, and
// only keys this submitter trusts. A history from before the check, or
// checked on other terms, gets checkedTip's own check.
func (e *Engine) tipsChecked(r *runRead, own RunInput) bool {
	st, sig := r.start, r.out.Input.TipSig
	if e.cfg.Workers == nil || own.Workers == nil || st.Workers == nil || sig == nil || r.exec == "" || sig.Run != r.exec ||
		r.versions[checkedResultsVersion] < 1 || r.versions[checkedTipsVersion] < 1 {
		return false
	}
	had, root := cmp.Or(own.Tip, own.Code), cmp.Or(st.Tip, st.Code)
	submitter := ""
	if st.Signed != nil && len(st.Signed.Key) > 0 {
		submitter = Fingerprint(st.Signed.Key)
	}
	return had != nil && root != nil && had.Tree == root.Tree && st.RunID == own.RunID && st.Namespace == e.cfg.Namespace &&
		submitter == e.fingerprint() && e.cfg.Workers.trustsAll(st.Workers)
}

// ownRoot is nil when sig (checked) signs a tip whose chain started from
// had, the tree this submitter started the execution from; else the
// refusal (review26 P1-2: a step of a run with no signed start builds on
// the tree it is handed, which whoever completes the workflow chooses).
func ownRoot(run string, had *codesnap.Snapshot, sig *TipSig) error {
	switch {
	case sig.V < 2:
		return fmt.Errorf("%s: it was not landed", beforeLists(run))
	case sig.V < 3:
		return fmt.Errorf("the run's tree is signed by a worker from before tip roots, which does not say what tree its chain started from: it was not landed; upgrade every worker, then run the plan again (brood workflow run)")
	case had == nil || sig.Root != had.Tree:
		return fmt.Errorf("the run's tree was built on tree %s, not the one this submitter started the run from: whatever completed the run's workflow on Temporal handed its chain steps a tree of its own making (anyone who reaches the frontend can); it was not landed", printable(sig.Root))
	}
	return nil
}

// beforeLists is the refusal of a tip signed with no list of its writers
// (v1) in a run whose submission signs its workers (review25 P2-2): the
// tip does not say which writers' changes are in it.
func beforeLists(run string) string {
	return "the run's tree is signed by a worker from before tip lists, which does not say which writers' changes are in it: upgrade every worker, then run the plan again (brood workflow run; a resume of " + run + " would start from this tree)"
}

// judgeTip says on out's result what settleOwn would of the execution
// run's tree, landing and keeping nothing: a tree no trusted worker signed
// for it refused, the writers its signed list does not name not-applied
// (workflow show, from a checkout that kept no result: review25 P2-4).
func (e *Engine) judgeTip(ctx context.Context, own RunInput, r *runRead, run string) {
	out := r.out
	in, err := e.checkedTip(ctx, own, out.Input, run, e.tipsChecked(r, own))
	if err != nil {
		refuseTip(out.Result, err)
		return
	}
	if said := e.refuseNotInTip(in, own, out); said != "" {
		out.Result.Reason = joinReason(out.Result.Reason, said)
	}
}

// refuseNotInTip marks not-applied on out's result the writers whose
// change the taken tip in (takeTip, checkedTip) does not hold, from the
// tree own started the execution in, and says so ("": none).
func (e *Engine) refuseNotInTip(in, own RunInput, out RunOutput) string {
	in.Chained = out.Input.Chained
	start := own.Tip
	if start == nil {
		start = own.Code
	}
	return refuseWriters(out.Result, e.notInTip(in, start, out.Result))
}

// keepTip keeps a refused tip's change (from what the run started in) as
// a refused patch is kept, under the state dir, and says where ("": not
// kept).
func (e *Engine) keepTip(ctx context.Context, own RunInput, tip *codesnap.Snapshot) string {
	if e.cfg.Code == nil || e.cfg.Code.StateDir == "" || dispatch.CheckID(own.RunID) != nil || own.Code == nil {
		return ""
	}
	res, err := codesnap.Delta(ctx, e.cfg.Code.Blobs, e.cfg.Code.Dir, own.Code, tip)
	if err != nil || res == nil || res.Patch == nil {
		return fmt.Sprintf("; its change was not kept (%v)", err)
	}
	file := filepath.Join(e.cfg.Code.StateDir, own.RunID, own.RunID+".refused.patch")
	k, err := e.writeKept(ctx, *res.Patch, file)
	if err != nil {
		return "; its change was not kept (" + err.Error() + ")"
	}
	return "; " + k.message() + ": read it before you apply any of it"
}

// refuseTip says on res that the run's tree was refused (takeTip): the
// run failed, every call whose change is in that tree not applied, with
// brood's own reason.
func refuseTip(res *wf.Result, err error) string {
	msg := "fleet: " + err.Error()
	if res == nil {
		return msg
	}
	res.NotLanded(err.Error())
	res.Landed, res.Status = msg, wf.RunFailed
	res.Reason = msg
	return msg
}

// settleOwn lands the execution run's tree as this submitter takes it
// (takeTip) and says on res what became of it.
func (e *Engine) settleOwn(ctx context.Context, own RunInput, r *runRead, run string, again bool) {
	out := r.out
	in, err := e.takeTip(ctx, own, out.Input, run, e.tipsChecked(r, own))
	if err != nil {
		refuseTip(out.Result, err)
		return
	}
	said := e.refuseNotInTip(in, own, out)
	e.settleTree(ctx, in, out.Result, again)
	if said != "" {
		out.Result.Landed = strings.TrimSpace(said + "; " + strings.TrimPrefix(out.Result.Landed, "fleet: "))
		out.Result.Landed = strings.TrimSuffix(out.Result.Landed, ";")
		out.Result.Reason = joinReason(out.Result.Reason, said)
	}
}

// ownPart is what of an execution's input its submitter signed (sub,
// after ownSubmission; nil: no key): its tip only as far as the resume
// that started it signed it (the chain steps made the rest).
func ownPart(in RunInput, sub *Submission) RunInput {
	in.Tip, in.TipSig, in.Chained, in.ChainFails = nil, nil, nil, nil
	if sub != nil {
		// Which workers it signed (a v1 tip is refused when it signed
		// some) and which writers a resume carried: never the output's.
		in.Tip, in.Workers, in.Carried = sub.Tip, sub.Workers, sub.Carried
	}
	return in
}

// landEarlierRun lands the tree an earlier execution (exec) left (a
// resume) when a worker key this submitter trusts signed it in that
// execution, or it is the tree that execution started from (sub, this
// key's submission for it), and says what the landing
// did; a refused tree is not landed and the run is not continued: its
// result says why (refuseTip), and err is that refusal.
func (e *Engine) landEarlierRun(ctx context.Context, r *runRead, exec string) (string, error) {
	out, sub := r.out, r.sub
	own := ownPart(out.Input, sub)
	if _, err := e.takeTip(ctx, own, out.Input, tipRun(exec, sub), e.tipsChecked(r, own)); err != nil {
		refuseTip(out.Result, err)
		return "", err
	}
	return e.landRun(ctx, out.Input), nil
}
