package temporal

import (
	"context"
	"fmt"
)

// ownSubmission is the submission this key signed for the execution whose
// input in is; nil, nil without a key. Before a resume signs a run's next
// execution with this submitter's key, the input the run's latest
// execution returned must be one this key signed: its submission,
// verified against this key alone, names the run and carries exactly its
// plan, inputs, limits and snapshot. Anyone who reaches the frontend can
// start an execution of the run's workflow id ending with an input of
// their making; signed as it stood, a resume would hand honest workers
// their brief under the user's signature (review17 X1). The run must be
// the one asked for, id: another run this key signed, however old, is not
// resumed under id's name (review17 X1b). Without a key nothing is
// signed, and nothing is checked.
func (e *Engine) ownSubmission(ctx context.Context, id string, in RunInput) (*Submission, error) {
	s := e.cfg.Signer
	if s == nil {
		return nil, nil
	}
	notOurs := func(why string) error {
		return fmt.Errorf("run %s's latest execution on Temporal is not one this key started (%s): not resumed; check who can start workflows in the namespace, and run the plan again", in.RunID, why)
	}
	if in.RunID != id {
		return nil, notOurs(fmt.Sprintf("it says it is run %q", in.RunID))
	}
	if in.Signed == nil {
		return nil, notOurs("it carries no signed submission")
	}
	mine := NewTrust()
	if err := mine.Add(s.Public(), "this submitter's key"); err != nil {
		return nil, notOurs(err.Error())
	}
	store := e.store()
	sub, err := mine.verify(ctx, store, in.Signed)
	if err != nil {
		return nil, notOurs(err.Error())
	}
	switch {
	case sub.Kind != "plan" || sub.Workflow != in.RunID:
		return nil, notOurs(fmt.Sprintf("its submission is a %s of %q", sub.Kind, sub.Workflow))
	case !sameJSON(sub.Plan, in.Plan) || !sameJSON(sub.Inputs, in.Inputs):
		return nil, notOurs("its plan or inputs are not the signed ones")
	case !sameJSON(sub.Limits, in.Limits):
		return nil, notOurs("its limits are not the signed ones")
	case !sameJSON(sub.Code, in.Code):
		return nil, notOurs("its snapshot is not the signed one")
	case !sameJSON(sub.Workers, in.Workers) || !sameJSON(sub.Carried, in.Carried):
		return nil, notOurs("its worker keys or carried results are not the signed ones")
	case !sameJSON(sub.Versions, in.Versions):
		return nil, notOurs("the workflow versions it requires are not the signed ones")
	}
	return sub, nil
}

// runFromOwn is where the results of run id's execution exec must have
// been signed (runFrom), as the submission sub this key signed for it
// says (ownSubmission); without a key (sub nil), as its input in says.
// The plan is sub's only: never the output's, and never a start this key
// did not sign (ownRunOutput replays none: review23 P2-5, review25 P2-1).
func (e *Engine) runFromOwn(id, exec string, in RunInput, sub *Submission) runFrom {
	if sub == nil {
		return runFrom{id: id, exec: exec, carried: in.Carried, noPlan: "this submitter has no key, so its plan on Temporal is whoever started the run's"}
	}
	return runFrom{id: id, exec: exec, carried: sub.Carried, plan: sub.Plan, inputs: sub.Inputs}
}

// tipRun is the execution a tip an execution left must have been signed
// in (exec), when this key signed the tip it started from (sub); without a
// key, any of the run's ("").
func tipRun(exec string, sub *Submission) string {
	if sub == nil {
		return ""
	}
	return exec
}
