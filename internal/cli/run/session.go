package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/cli/render"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/spend"
	"github.com/broodhq/brood/internal/taskdir"
)

// sessionsDir is where a project's root transcripts live.
func sessionsDir(root string) string { return taskdir.Open(root).SessionsDir() }

// sessionIDs lists the project's sessions, oldest first: a ULID by the
// time it holds, a session named by --session-id (a UUID) by its file's
// modification time.
func sessionIDs(root string) []string {
	files, _ := filepath.Glob(filepath.Join(sessionsDir(root), "*.jsonl"))
	type dated struct {
		id string
		at time.Time
	}
	all := make([]dated, 0, len(files))
	for _, f := range files {
		d := dated{id: render.SessionID(f)}
		if u, err := ulid.ParseStrict(d.id); err == nil {
			d.at = ulid.Time(u.Time())
		} else if fi, err := os.Stat(f); err == nil {
			d.at = fi.ModTime()
		}
		all = append(all, d)
	}
	slices.SortStableFunc(all, func(a, b dated) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	ids := make([]string, len(all))
	for i, d := range all {
		ids[i] = d.id
	}
	return ids
}

// isUUID reports whether s is a UUID as Claude Code's --session-id takes
// it: 8-4-4-4-12 hexadecimal digits.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}

// newSessionPath names a new session's transcript: --session-id's UUID
// (one not in use), a fresh ULID, or under --no-session-persistence a
// file in a temporary directory (tmp: remove it when the run is over).
// A kept one's owner record is written now when it forks a session
// (from: Fork seals the copy's first line into it), else it is claim,
// written with the transcript's first line (session.Options.Claim).
func newSessionPath(f *cmdutil.Factory, o *Options, from string) (path, tmp string, claim *session.Pending, err error) {
	id := ulid.Make().String()
	if c := o.Compat.SessionID; c != "" {
		if !isUUID(c) {
			return "", "", nil, cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("--session-id %q: not a UUID; give one like 123e4567-e89b-12d3-a456-426614174000 (uuidgen)", c))
		}
		id = strings.ToLower(c)
		if _, err := os.Lstat(filepath.Join(sessionsDir(f.ProjectRoot), id+".jsonl")); err == nil {
			return "", "", nil, cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("--session-id %s: the session is already in use; continue it with --resume %s", id, id))
		}
	}
	if o.Compat.NoPersistence {
		tmp, err = os.MkdirTemp("", "brood-session-")
		if err != nil {
			return "", "", nil, fmt.Errorf("--no-session-persistence: %w", err)
		}
		return filepath.Join(tmp, id+".jsonl"), tmp, nil, nil
	}
	if err := dispatch.EnsureStateDir(f.ProjectRoot); err != nil {
		return "", "", nil, err
	}
	proj := taskdir.Open(f.ProjectRoot)
	if n := proj.Notice(); n != "" {
		fmt.Fprintln(f.Err, n)
	}
	// A repository's own .brood/.gitignore must not publish the person's
	// transcripts (redteam P2-8, redteam19 P2-1): a few reads when it is
	// brood's.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range proj.KeepRecordsOutOfGit(ctx) {
		fmt.Fprintln(f.Err, n)
	}
	path = filepath.Join(sessionsDir(f.ProjectRoot), id+".jsonl")
	// The session's owner record, sealed: what tells it from a transcript
	// a repository ships when it is continued (session.Mine).
	if from == "" {
		return path, "", session.ClaimLater(path, ""), nil
	}
	if err := session.Claim(path, from); err != nil {
		return "", "", nil, err
	}
	return path, "", nil, nil
}

// sessionPath resolves --session, --continue and --resume to the
// transcript to continue, or "" for a new session.
func sessionPath(f *cmdutil.Factory, o *Options) (string, error) {
	n := 0
	for _, set := range []bool{o.Session != "", o.Continue, o.Resume != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return "", cmdutil.UsageError("--session, --continue and --resume each name the session to continue: give one")
	}
	if n > 0 && o.Compat.SessionID != "" && !o.Compat.ForkSession {
		return "", cmdutil.UsageError("--session-id names a new session; with --continue or --resume add --fork-session (the session is copied under the new id), or drop --session-id")
	}
	switch {
	case o.Session != "":
		// A transcript in brood's sessions directory is continued only
		// when this user's brood made it, as a listed one is.
		if session.InDir(sessionsDir(f.ProjectRoot), o.Session) {
			if err := session.Mine(o.Session); err != nil {
				return "", fmt.Errorf("--session: %w", err)
			}
		}
		return o.Session, nil
	case o.Continue:
		return latestSession(f)
	case o.Resume != "":
		return resumeSession(f, o.Resume)
	}
	return "", nil
}

// latestSession is --continue's: the newest session this user's brood
// made; a newer one that it did not make (a repository shipped it) is
// passed over, said on stderr (redteam P1-6).
func latestSession(f *cmdutil.Factory) (string, error) {
	// The sessions are listed only to continue one: a new session's
	// start does not read the directory.
	dir := sessionsDir(f.ProjectRoot)
	all := sessionIDs(f.ProjectRoot)
	mine, others := session.Split(dir, all)
	if len(mine) == 0 {
		if len(others) > 0 {
			return "", fmt.Errorf("--continue: %w", session.Mine(filepath.Join(dir, others[len(others)-1]+".jsonl")))
		}
		return "", fmt.Errorf("--continue: no session yet in %s; start one with brood run \"...\"", dir)
	}
	last := mine[len(mine)-1]
	if skipped := len(all) - 1 - slices.Index(all, last); skipped > 0 {
		fmt.Fprintf(f.Err, "%s; continuing %s, the newest of yours\n", session.LeftOut(dir, skipped), last)
	}
	return filepath.Join(dir, last+".jsonl"), nil
}

// resumeSession is --resume ID's: one of the sessions this user's brood
// made; an id that names only another (a repository's) is refused, saying
// why.
func resumeSession(f *cmdutil.Factory, q string) (string, error) {
	dir := sessionsDir(f.ProjectRoot)
	all := sessionIDs(f.ProjectRoot)
	mine, _ := session.Split(dir, all)
	id, err := cmdutil.ResolveID("session", q, mine)
	if err != nil {
		if other, oerr := cmdutil.ResolveID("session", q, all); oerr == nil && !slices.Contains(mine, other) {
			return "", fmt.Errorf("--resume: %w", session.Mine(filepath.Join(dir, other+".jsonl")))
		}
		return "", fmt.Errorf("--resume: %w", err)
	}
	return filepath.Join(dir, id+".jsonl"), nil
}

// needPrompt refuses a new session without a prompt (exit 1, as claude
// -p's "Input must be provided either through stdin or as a prompt
// argument"); continuing one (--continue, --resume, --session) may go on
// without one.
func (o *Options) needPrompt() error {
	if o.Session != "" || o.Continue || o.Resume != "" || strings.TrimSpace(o.Prompt) != "" {
		return nil
	}
	return cmdutil.ExitCode(cmdutil.ExitFailed, errors.New("no prompt: give it as an argument (brood run \"what should the agent do?\") or on stdin (echo ... | brood run)"))
}

// openSession reads the transcript to continue, or names a new one (tmp
// is a directory to remove when the run is over: --no-session-persistence;
// claim the new session's owner record, for its transcript's writer).
func openSession(f *cmdutil.Factory, o *Options) (history []model.Message, path, tmp string, claim *session.Pending, err error) {
	path, err = sessionPath(f, o)
	if err != nil {
		return nil, "", "", nil, err
	}
	if path != "" {
		recs, _, err := session.ReadFile(path)
		if err != nil {
			return nil, "", "", nil, fmt.Errorf("session %s: %w", render.SessionID(path), err)
		}
		history := explainInterrupted(f.ProjectRoot, recs, session.Replay(recs).Messages)
		if o.Prompt == "" && (len(history) == 0 || history[len(history)-1].Role != model.RoleUser) {
			return nil, "", "", nil, fmt.Errorf("session %s: nothing to continue: the last run finished; give a prompt", render.SessionID(path))
		}
		if !o.Compat.ForkSession {
			return history, path, "", nil, nil
		}
		// --fork-session: a new session (its own id, or --session-id's)
		// holding a copy of the old one, which is left as it was.
		forked, tmp, _, err := newSessionPath(f, o, render.SessionID(path))
		if err != nil {
			return nil, "", "", nil, err
		}
		if err := session.Fork(path, forked); err != nil {
			if tmp != "" {
				os.RemoveAll(tmp)
			}
			return nil, "", "", nil, cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("--fork-session: %w", err))
		}
		return history, forked, tmp, nil, nil
	}
	if err := o.needPrompt(); err != nil {
		return nil, "", "", nil, err
	}
	path, tmp, claim, err = newSessionPath(f, o, "")
	return nil, path, tmp, claim, err
}

// finish runs the agent loop, waits for background children, and maps the
// outcome to the exit status.
func finish(ctx context.Context, f *cmdutil.Factory, cfg agent.Config, history []model.Message, prompt, path string, out output, disp *spawn.Dispatcher, b *bill, fo finishOpts) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if fo.schema != nil {
		prompt += "\n\n" + fo.schema.Instruction()
	}
	outcome, overBudget := runOnce(ctx, cancel, f, cfg, history, prompt, path, out, b, fo)
	if outcome != nil && outcome.Status == agent.StatusFailed && fo.fallback != "" && ctx.Err() == nil {
		m, err := f.ResolveModel(fo.fallback)
		if err != nil {
			return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("--fallback-model: %w", err))
		}
		fmt.Fprintf(f.Err, "brood: the model failed (%s); continuing with --fallback-model %s\n", outcome.Error, fo.fallback)
		before := *outcome
		cfg.Model = m
		// The conversation so far, its last message the unanswered prompt.
		outcome, overBudget = runOnce(ctx, cancel, f, cfg, before.Messages, "", path, out, b, fo)
		if outcome != nil {
			outcome.Usage = outcome.Usage.Add(before.Usage)
		}
	}
	var structured json.RawMessage
	var schemaErr string
	for retry := 0; fo.schema != nil && outcome != nil && outcome.Status == agent.StatusDone && !overBudget; retry++ {
		v, why := fo.schema.Check(outcome.Text)
		if why == nil {
			structured = v
			break
		}
		if retry == call.DefaultRetries {
			schemaErr = fmt.Sprintf("%s after %d retries: %v", call.InvalidOutput, retry, why)
			break
		}
		// Sent back, the conversation intact, as a Task call's answer is.
		before := *outcome
		again := fmt.Sprintf("Your answer was rejected: %v\n\nAnswer again, ending with one ```json block that validates against the schema. %s", why, fo.schema.Instruction())
		outcome, overBudget = runOnce(ctx, cancel, f, cfg, outcome.Messages, again, path, out, b, fo)
		if outcome != nil {
			outcome.Usage = outcome.Usage.Add(before.Usage)
			outcome.Turns += before.Turns
		}
	}
	if outcome == nil {
		return cmdutil.ExitCode(cmdutil.ExitFailed, errors.New("the run ended without an outcome"))
	}
	out.Event(agent.Event{Type: agent.EvDone, Outcome: outcome})
	var childUsage model.Usage
	if disp != nil {
		// Background children the model left running are waited for: they
		// are work the user asked for. Ctrl-C stops them in stages; each is
		// then recorded as cancelled and stays resumable.
		if n := len(disp.Running()); n > 0 {
			fmt.Fprintf(f.Err, "· waiting for %d background task(s); Ctrl-C stops them (they stay resumable with brood tasks resume)\n", n)
			disp.WaitBackground()
		}
		childUsage = disp.ChildUsage()
	}
	t := b.totals(outcome.Usage, childUsage, f.Err)
	t.StructuredOutput, t.SchemaError = structured, schemaErr
	if schemaErr != "" {
		out.Done(outcome, path, t)
		return cmdutil.ExitCode(cmdutil.ExitFailed, errors.New("--json-schema: "+schemaErr))
	}
	if overBudget {
		t.BudgetUSD = fo.budgetUSD
		out.Done(outcome, path, t)
		return cmdutil.ExitCode(cmdutil.ExitFailed, nil) // the line above said why
	}
	out.Done(outcome, path, t)
	switch outcome.Status {
	case agent.StatusFailed:
		return cmdutil.ExitCode(cmdutil.ExitFailed, errors.New(outcome.Error))
	case agent.StatusCancelled:
		return cmdutil.ExitCode(cmdutil.ExitInterrupt, fmt.Errorf("cancelled; continue with brood run --resume %s", render.SessionID(path)))
	case agent.StatusPartial:
		if !fo.broodCodes {
			return cmdutil.ExitCode(cmdutil.ExitFailed, nil) // claude -p's status; Done said how to continue
		}
		return cmdutil.ExitCode(cmdutil.ExitPartial, nil) // Done said how to continue
	}
	return nil
}

// runOnce runs the agent loop once to its outcome (nil if it ended
// without one), stopping it through cancel when --max-budget-usd is
// reached (overBudget).
func runOnce(ctx context.Context, cancel func(), f *cmdutil.Factory, cfg agent.Config, history []model.Message, prompt, path string, out output, b *bill, fo finishOpts) (outcome *agent.Outcome, overBudget bool) {
	for ev, err := range agent.Run(ctx, cfg, history, prompt) {
		if err != nil {
			break
		}
		if ev.Type == agent.EvDone {
			outcome = ev.Outcome // finish shows the last run's, after any retry
			continue
		}
		if ev.Type == agent.EvNote {
			fmt.Fprintf(f.Err, "brood: %s\n", ev.Text) // once, before the first turn, whatever the output format
		}
		out.Event(ev)
		if ev.Outcome != nil {
			outcome = ev.Outcome
		}
		if ev.Type == agent.EvUsage && ev.Total != nil && fo.budgetUSD > 0 && !overBudget {
			if t := b.totals(*ev.Total, model.Usage{}, io.Discard); t.Cost.USD >= fo.budgetUSD {
				overBudget = true
				fmt.Fprintf(f.Err, "brood: --max-budget-usd: the run has spent %s of %s; stopping it (continue with brood run --resume %s)\n",
					spend.USD(t.Cost.USD), spend.USD(fo.budgetUSD), render.SessionID(path))
				cancel()
			}
		}
	}
	return outcome, overBudget
}

// finishOpts are the flags that change how a run ends: brood's own exit
// codes, and --max-budget-usd (0: no cap).
type finishOpts struct {
	broodCodes bool
	budgetUSD  float64
	schema     *call.Schema // --json-schema
	fallback   string       // --fallback-model
}
