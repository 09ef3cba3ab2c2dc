package temporal

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
)

// askedFor checks that a call naming a task this worker has a record of
// (to continue it, pick it up, or return its result) is a call that task
// belongs to, by the worker's own owner record (a child cannot write it):
// the same agent, for a call that names who asks (a plan's: "workflow
// RUN") the same asker, and the same submitter (the key that signed the
// call's submission and its workflow id): another trusted submitter's
// call naming the task (its id is in the workflow id, no secret) never
// continues, returns or reads its conversation. A plan's signature covers its agents and prompts,
// not the task ids its workflow hands out, so without this anyone who can
// complete a plan's workflow task could have one of its read-only calls
// resume another run's writer, which would run as that writer with a
// prompt nobody signed. A single call's spec is signed whole, resume
// included: it names no asker and may leave the agent to the task's.
// A plan's call that continues its task (a resume) continues it only
// when this worker ran it for the call's own brief (prompt, description
// and context): a completer that re-briefed the call in an earlier
// execution would have the resume continue that conversation from this
// worker's records, where the workflow keeps no continuation of it
// (activityRunner.stopped; review28 P1-2).
// A task with no record here is not checked here: it starts here as the
// call's own agent, from the store's transcript when it has one. What
// holds on every worker, with a record or none, is checked elsewhere: a
// plan's call names only a task of its run (planTaskCovers), an attempt
// continues only its call's task (sameTask), from a transcript uploaded
// for that task (transcriptOf).
func askedFor(projectRoot, id string, spec call.Spec) error {
	own, err := dispatch.ReadOwner(dispatch.Records(projectRoot), id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("task %s's owner record on this worker is unreadable, so this call cannot be checked against it: %v", id, err)
	case own.TaskID != id:
		return fmt.Errorf("task %s's owner record on this worker names task %s", id, own.TaskID)
	case spec.Agent != "" && !strings.EqualFold(own.Agent, spec.Agent): // names are matched without case, as the registry does
		return fmt.Errorf("the call runs agent %q and names task %s, which is a %q task on this worker: a call continues only a task of its own agent", spec.Agent, id, own.Agent)
	case spec.Parent != "" && own.Asker != spec.Parent:
		return fmt.Errorf("the call is %s's and names task %s, which %s asked for: a plan's call continues only that plan's tasks", spec.Parent, id, askerName(own.Asker))
	case spec.Submitter != own.Submitter:
		return unbound("the call (%s) names task %s, which this worker ran for %s: a task continues only for the submitter key and workflow that started it", spec.Submitter, id, cmp.Or(own.Submitter, "a worker from before submitters were recorded"))
	case spec.Continue && spec.Parent != "" && (own.Brief != spec.Prompt || own.Description != spec.Description || own.Context != spec.Context):
		return fmt.Errorf("the call continues task %s of %s, which this worker ran for another brief than the call's: a resumed plan call continues only the conversation of its own brief (whoever completed the run's workflow tasks may have re-briefed it), so nothing of it is continued; run the plan again", id, spec.Parent)
	}
	return nil
}

func askerName(a string) string {
	if a == "" {
		return "a single call (or a worker from before asks were recorded)"
	}
	return a
}
