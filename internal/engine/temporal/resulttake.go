package temporal

import (
	"context"
	"crypto/ed25519"
	"path/filepath"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
)

// fingerprint is the submitter fingerprint a worker signs a result for:
// its signing key's ("": it signs nothing).
func (e *Engine) fingerprint() string {
	if e.cfg.Signer == nil {
		return ""
	}
	return Fingerprint(e.cfg.Signer.key.Public().(ed25519.PublicKey))
}

// takeCall is a single call's result as the submitter takes it: out's,
// when a worker key it trusts signed it for the call's workflow run
// (workflow wid, execution run) for the input brood's call workflow makes
// from start, the call's start input (briefRefusal); else failed with the refusal, its patch
// not applied but kept under the project's .brood/fleet/patches/ as a
// conflict's is (keep: a listing keeps nothing). ok says whether it was
// taken. Its queued and run times are the server's history's (times:
// callTimes, from the history its output was replayed from).
func (e *Engine) takeCall(ctx context.Context, task, wid, run string, start CallInputW, out *CallOutput, times callHistory, keep bool) (r call.Result, ok bool) {
	r, ok = e.takeResult(ctx, task, wid, run, start, out, keep)
	if ok {
		serverTimes(&r, times)
	}
	return r, ok
}

func (e *Engine) takeResult(ctx context.Context, task, wid, run string, start CallInputW, out *CallOutput, keep bool) (r call.Result, ok bool) {
	err := e.cfg.Workers.check(resultCall{Namespace: e.cfg.Namespace, Workflow: wid, Run: run, Submitter: e.fingerprint(), Task: task}, out)
	if err == nil && e.cfg.Workers != nil {
		err = briefRefusal(task, start, out)
	}
	if err == nil {
		if e.cfg.Workers != nil && out.Sig == nil {
			// An unsigned ending (failed, killed, cancelled): its status
			// alone, nothing of an answer, figures or worker anyone could
			// have put, and brood's reason, never one whoever failed the
			// activity or completed the workflow wrote (unsignedEnding);
			// a cancelled one's figures are those of the result its
			// worker signed with the cancel, when one is checked here.
			o := out.Result
			r = call.Result{TaskID: task, Agent: o.Agent, Status: o.Status, Error: unsignedEnding("task "+task, o.Status, o.Error)}
			if f, ok := e.stoppedFigures(task, wid, run, start, out); ok {
				// Cancelled: the figures of the result its worker signed
				// with the cancel, brood's reason kept (callcancel.go).
				keepFigures(&r, f)
			}
			return r, true
		}
		r = taken(out.Result, out.Sig)
		if r.Status == dispatch.StatusCancelled {
			// A child that ended cancelled of itself: its figures, never
			// its words (callcancel.go).
			r.Error = cancelledUnshown
		}
		return r, true
	}
	r = refusedResult(out.Result, err)
	r.TaskID = task
	res, _ := callChange(&out.Result)
	if !keep || res == nil || e.cfg.Code == nil || e.cfg.Code.StateDir == "" || dispatch.CheckID(r.TaskID) != nil {
		return r, false
	}
	file := filepath.Join(e.cfg.Code.StateDir, task, task+".refused.patch") // never a kept conflict's file
	k, kerr := e.writeKept(ctx, *res.Patch, file)
	if kerr != nil {
		r.Error += "; its patch was not kept (" + kerr.Error() + ")"
		return r, false
	}
	r.Error += "; " + k.message() + ": read it before you apply any of it"
	return r, false
}
