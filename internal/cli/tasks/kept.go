package tasks

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/engine/local"
	"github.com/broodhq/brood/internal/shortid"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/termsafe"
	wf "github.com/broodhq/brood/internal/workflow"
)

// keptCall is a call of a fleet plan run as this project's kept result
// of the run has it (.brood/workflows/<run_id>/result.json with no
// run.json: its submitter's copy), for `brood tasks show` when the fleet
// does not answer (issue 26, P3), as `brood workflow show` reads the run.
type keptCall struct {
	ID     string        `json:"id"`
	Kind   string        `json:"kind"` // plan call
	RunID  string        `json:"workflow"`
	Kept   string        `json:"kept"` // the file it was read from
	Fleet  string        `json:"fleet_error,omitempty"`
	Record wf.CallRecord `json:"call"`
}

// findKeptCall finds the call q names (a whole id, a unique prefix or
// tail) among this project's kept fleet runs; nil when none has it.
func findKeptCall(projectRoot, q string) (*keptCall, error) {
	dir := taskdir.Open(projectRoot).WorkflowsDir()
	ents, _ := os.ReadDir(dir)
	found := map[string]*keptCall{}
	var ids []string
	for _, e := range ents {
		run := e.Name()
		res, file := local.KeptFleetResult(projectRoot, run) // nil for a local run: its calls are this project's tasks
		if res == nil {
			continue
		}
		for _, ph := range res.Phases {
			for _, c := range ph.Calls {
				if c.TaskID != "" && found[c.TaskID] == nil {
					found[c.TaskID] = &keptCall{ID: c.TaskID, Kind: "plan call", RunID: run, Kept: file, Record: c}
					ids = append(ids, c.TaskID)
				}
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	id, err := shortid.Match(q, ids)
	if errors.Is(err, shortid.ErrAmbiguous) {
		return nil, err
	} else if err != nil {
		return nil, nil
	}
	return found[id], nil
}

// showKept prints a kept call as a fleet call's detail reads, saying
// where it was read from and why.
func showKept(out io.Writer, k *keptCall, asJSON bool) error {
	if asJSON {
		return cmdutil.WriteJSON(out, k)
	}
	w := termsafe.NewWriter(out)
	c := k.Record
	fmt.Fprintf(w, "task     %s (a call of fleet plan run %s, read from this project's kept result: the fleet was not reached or no longer has it)\n", k.ID, k.RunID)
	fmt.Fprintf(w, "agent    %s\nstatus   %s\nbrief    call %s of plan run %s (brood workflow show %s)\n",
		termsafe.Line(c.Agent), termsafe.Line(c.Status), termsafe.Line(c.Key), k.RunID, k.RunID)
	if c.Worker != "" {
		fmt.Fprintf(w, "worker   %s (ran it; %d attempt(s) on the fleet)\n", termsafe.Line(c.Worker), c.Attempts)
	}
	if c.Error != "" {
		fmt.Fprintf(w, "error    %s\n", termsafe.Line(c.Error))
	}
	for _, x := range c.Failures {
		fmt.Fprintf(w, "failure  %s\n", termsafe.Line(x))
	}
	if c.Landed != "" {
		fmt.Fprintf(w, "change   %s\n", termsafe.Line(c.Landed))
	}
	fmt.Fprintf(w, "\nresult (%s, %d attempt(s) on the fleet, %d tokens in, %d out):\n", termsafe.Line(c.Status), c.Attempts, c.Usage.Input, c.Usage.Output)
	switch v := c.Output.(type) {
	case nil:
		fmt.Fprintln(w, "(no output: the plan got null)")
	case string:
		fmt.Fprintln(w, v)
	default:
		cmdutil.WriteJSON(w, v)
	}
	fmt.Fprintf(w, "\nkept     %s\n", k.Kept)
	if k.Fleet != "" {
		fmt.Fprintf(w, "fleet    %s\n", termsafe.Line(k.Fleet))
	}
	return nil
}
