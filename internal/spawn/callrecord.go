package spawn

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/guard"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/textline"
	"github.com/broodhq/brood/internal/tool"
)

// Bounds on the parent's record of one run's tool calls: what the child
// says is its choice, the parent's memory and disk are not.
const (
	maxRunCalls     = 20000
	maxRunCallBytes = 32 << 20
	maxCallCommand  = 16 << 10
	// storedOutput is how much of a call's output the record on disk
	// keeps (its head and tail): a later run's guardrails read a refusal's
	// words and a test run's last lines of it.
	storedOutput = 2 << 10
)

// callLog is the parent's record of one run's tool calls, made from the
// ToolCall lines of the child's protocol stream (progress.line) as they
// come: the child's own code says them, on a pipe its tools cannot reach.
// The child is still hostile: a line out of order or about a call never
// started is not taken, and said once as a gap.
type callLog struct {
	mu    sync.Mutex
	run   int
	calls []dispatch.CallRecord
	bytes int
	gaps  []string
}

func (l *callLog) gap(why string) {
	if !slices.Contains(l.gaps, why) {
		l.gaps = append(l.gaps, why)
	}
}

// add takes one ToolCall line.
func (l *callLog) add(m protocol.ToolCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !m.Ended {
		if m.Seq != len(l.calls)+1 {
			l.gap("a call said out of its place: not taken")
			return
		}
		if len(l.calls) >= maxRunCalls || l.bytes >= maxRunCallBytes {
			l.gap(fmt.Sprintf("the run made more calls than the record keeps (%d calls, %d MiB): the rest are not taken", maxRunCalls, maxRunCallBytes>>20))
			return
		}
		c := dispatch.CallRecord{Run: l.run, Tool: clip(m.Tool, maxNameLen), Command: clip(m.Command, maxCallCommand), Path: clip(m.Path, maxCallCommand)}
		l.bytes += len(c.Command) + len(c.Path)
		l.calls = append(l.calls, c)
		return
	}
	if m.Seq < 1 || m.Seq > len(l.calls) || l.calls[m.Seq-1].Ended {
		l.gap("the end of a call never started, or ended twice: not taken")
		return
	}
	c := &l.calls[m.Seq-1]
	c.Ended, c.IsError, c.Refused = true, m.IsError, m.Refused
	if l.bytes < maxRunCallBytes {
		c.Output = protocol.ClipOutput(m.Output)
		l.bytes += len(c.Output)
	}
	if m.Command != "" || m.Path != "" {
		// A hook replaced the model's input: this is what ran.
		c.Command, c.Path = clip(m.Command, maxCallCommand), clip(m.Path, maxCallCommand)
	}
}

// taken returns this run's calls and gaps.
func (l *callLog) taken() ([]dispatch.CallRecord, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls), slices.Clone(l.gaps)
}

// recordCalls puts this run's calls after the earlier runs' in the
// parent's record of the task's calls, writes it, and returns the whole
// record as the guardrails read it. The record is the parent's own file
// (its records, beyond every child's reach; a sandboxed parent's
// owners/, as its verdicts); a failure to write it is said in the
// result's notes, and the guards judge what this process holds. known is
// false when an earlier run's calls are not in the record (its parent
// died before writing them, or the record was not believed): the guards
// then judge this run's calls without saying the child made none.
func (d *Dispatcher) recordCalls(j *job, run *callLog) (calls []guard.Call, known bool) {
	id := j.env.TaskID
	this := j.env.ResumeCount
	var rec dispatch.Calls
	said := false
	switch got, err := dispatch.ReadCalls(*d.cfg.Owners, id); {
	case err == nil:
		rec = *got
	case errors.Is(err, taskdir.ErrNotYours) && this > 0:
		said = true
		// Shipped or forged (report21): the earlier runs' calls are not
		// believed, so none of them is evidence for this run's result.
		j.env.Notes = append(j.env.Notes, "the record of the earlier runs' tool calls was not believed ("+err.Error()+"): only this run's calls were judged")
	}
	known = true
	for r := range this {
		if !slices.Contains(rec.Runs, r) {
			known = false
		}
	}
	if !known && !said {
		j.env.Notes = append(j.env.Notes, "the parent kept no record of an earlier run's tool calls (it died first): only this run's calls were judged")
	}
	keep := rec.Calls[:0]
	for _, c := range rec.Calls {
		if c.Run < this {
			keep = append(keep, c)
		}
	}
	rec.TaskID, rec.Calls = id, keep
	rec.Runs = slices.DeleteFunc(rec.Runs, func(r int) bool { return r >= this })
	var taken []dispatch.CallRecord
	var gaps []string
	if run != nil {
		taken, gaps = run.taken()
	}
	for _, g := range gaps {
		if g = fmt.Sprintf("run %d: %s", this, g); !slices.Contains(rec.Gaps, g) {
			rec.Gaps = append(rec.Gaps, g)
		}
	}
	judged := append(slices.Clone(rec.Calls), taken...)
	for _, c := range taken {
		c.Output = clipStored(c.Output)
		rec.Calls = append(rec.Calls, c)
	}
	rec.Runs = append(rec.Runs, this)
	if err := dispatch.WriteCalls(*d.cfg.Owners, rec); err != nil {
		j.env.Notes = append(j.env.Notes, "the parent could not keep its record of the child's tool calls ("+err.Error()+"): its guardrails judged the calls it holds in memory")
	}
	if !callsHeld(j.env) && (slices.Contains(j.env.Tools, "Bash") || len(j.env.MCP) > 0) {
		j.env.Notes = append(j.env.Notes, "no Landlock here: the child's tools could reach this parent's end of its protocol pipe, so the record of its tool calls that its guardrails judge is as good as the child's word")
	}
	return guardCalls(judged), known
}

// callsHeld reports whether the kernel keeps a child's tools off the
// parent's end of its protocol pipe: Landlock's scoping (a process in a
// domain may not ptrace, nor open /proc/PID/fd of, a process outside it).
// The child's own end is held everywhere: it is not dumpable, and its
// tools hold no CAP_SYS_PTRACE (sandbox.Undumpable,
// NoIntrospectionForCommand).
func callsHeld(env *dispatch.Envelope) bool {
	return !env.NoLandlock && sandbox.LandlockABI() >= 1
}

// clipStored bounds an output kept on disk to storedOutput: its head and
// its tail.
func clipStored(s string) string {
	if len(s) <= storedOutput {
		return s
	}
	head, tail := storedOutput/4, storedOutput*3/4
	return s[:head] + fmt.Sprintf("\n… (%d bytes left out) …\n", len(s)-head-tail) + s[len(s)-tail:]
}

// guardCalls are the recorded calls as the guards read them. A call that
// never ended (its child was stopped mid-call) proves nothing: an error.
func guardCalls(recs []dispatch.CallRecord) []guard.Call {
	out := make([]guard.Call, 0, len(recs))
	for _, r := range recs {
		c := guard.Call{Tool: tool.CanonicalName(r.Tool), Command: r.Command, Path: r.Path, Result: r.Output, IsError: r.IsError || !r.Ended, Refused: r.Refused}
		if !r.Ended {
			c.Result = "(the call never ended)"
		}
		out = append(out, c)
	}
	return out
}

// CallsDisagreement compares a task's transcript (the child's account,
// which its tools can write) with its parent's own record of its tool
// calls (dispatch.Calls in r, what the guardrails judged) and says in one
// line where they first differ: "" when they agree, or when neither holds
// a call. `brood tasks log` prints it under the transcript.
func CallsDisagreement(td *taskdir.Dir, r taskdir.Records) string {
	said, ok := transcriptCalls(td)
	if !ok {
		said = nil
	}
	got, err := dispatch.ReadCalls(r, td.ID())
	switch {
	case errors.Is(err, taskdir.ErrNotYours):
		return fmt.Sprintf("its parent's record of its tool calls is not believed (%v): the %d call(s) above are the child's word only", err, len(said))
	case err != nil:
		if len(said) == 0 {
			return ""
		}
		return fmt.Sprintf("its parent kept no record of its tool calls (a brood before records of calls ran it, or its parent died first): the %d call(s) above are the child's word only", len(said))
	}
	rec := *got
	kept := guardCalls(rec.Calls)
	n := min(len(said), len(kept))
	for i := range n {
		if w := callDiff(said[i], kept[i], rec.Calls[i].Ended); w != "" {
			return fmt.Sprintf("the child's transcript and its parent's record of its tool calls disagree at call %d of %d: %s; the guardrails judged the parent's record (the transcript is the child's to write)", i+1, len(kept), w)
		}
	}
	if len(said) != len(kept) {
		first := "the transcript has more"
		c := said[n:]
		if len(kept) > len(said) {
			first, c = "the parent's record has more", kept[n:]
		}
		return fmt.Sprintf("the child's transcript and its parent's record of its tool calls disagree: the transcript has %d call(s), the record %d (%s, from %s); the guardrails judged the parent's record (the transcript is the child's to write)", len(said), len(kept), first, describeCall(c[0]))
	}
	if len(rec.Gaps) > 0 {
		return "its parent's record of its tool calls has gaps: " + strings.Join(rec.Gaps, "; ")
	}
	return ""
}

// callDiff says how a call of the transcript differs from the record's
// ("" when it does not).
func callDiff(said, kept guard.Call, ended bool) string {
	switch {
	case said.Tool != kept.Tool || said.Command != kept.Command || said.Path != kept.Path:
		return "the transcript says " + describeCall(said) + ", the record " + describeCall(kept)
	case ended && said.IsError != kept.IsError:
		return fmt.Sprintf("%s: the transcript says it %s, the record that it %s", describeCall(kept), failed(said.IsError), failed(kept.IsError))
	case ended && said.Refused != kept.Refused:
		return fmt.Sprintf("%s: the transcript says it was %srefused, the record that it was %srefused", describeCall(kept), not(said.Refused), not(kept.Refused))
	}
	return ""
}

func describeCall(c guard.Call) string {
	what := cmp.Or(c.Command, c.Path)
	if what == "" {
		return c.Tool
	}
	return c.Tool + " " + strconv.Quote(textline.Line(what, 120))
}

func failed(isErr bool) string {
	if isErr {
		return "failed"
	}
	return "succeeded"
}

func not(b bool) string {
	if b {
		return ""
	}
	return "not "
}

// runsNothing are the tools whose calls run no program (so move no git
// ref): Edit, Write and NotebookEdit only outside any .git directory.
var runsNothing = []string{"Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "TodoWrite", "Edit", "Write", "NotebookEdit"}

// ranNoCommand reports whether the run's calls, as the parent recorded
// them, ran no program and wrote into no git directory: such a child
// moved no git ref, and a ref that moved during its run is someone
// else's (report21). Each written path is resolved as the kernel would
// (relative to the workspace, its parent's real path) and compared with
// the repository's git directories (gitDirs, taken before the run): a
// path under one, through a symbolic link, or that cannot be resolved may
// have moved a ref. False when the record has gaps.
func (l *callLog) ranNoCommand(workspace string, gitDirs []string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.gaps) > 0 || len(gitDirs) == 0 {
		return false
	}
	for _, c := range l.calls {
		name := tool.CanonicalName(c.Tool)
		if !slices.Contains(runsNothing, name) {
			return false
		}
		if p := "/" + filepath.ToSlash(c.Path) + "/"; strings.Contains(strings.ToLower(p), "/.git/") {
			return false
		}
		if c.Path != "" && slices.Contains([]string{"Edit", "Write", "NotebookEdit"}, name) && !outsideGit(workspace, c.Path, gitDirs) {
			return false
		}
	}
	return true
}

// outsideGit reports whether p (as a call gave it, relative to
// workspace) names a file through no symbolic link and under none of
// gitDirs.
func outsideGit(workspace, p string, gitDirs []string) bool {
	if !filepath.IsAbs(p) {
		p = filepath.Join(workspace, p)
	}
	p = filepath.Clean(p)
	ws, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return false
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return false
	}
	real := filepath.Join(dir, filepath.Base(p))
	// Through no link: the lexical path, the workspace's part resolved,
	// is the real one, and the file itself is no link.
	lexical := p
	if rel, err := filepath.Rel(filepath.Clean(workspace), p); err == nil && filepath.IsLocal(rel) {
		lexical = filepath.Join(ws, rel)
	}
	if lexical != real {
		return false
	}
	if fi, err := os.Lstat(real); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return false
	}
	for _, g := range gitDirs {
		if real == g || strings.HasPrefix(real, g+string(filepath.Separator)) {
			return false
		}
	}
	return true
}
