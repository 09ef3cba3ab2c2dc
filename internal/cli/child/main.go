package child

import (
	"context"
	"fmt"
	"strings"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/spawntrace"
)

// Parse recognises the child protocol's command line, the one a parent
// starts each subagent with: only the flags --mode, --task-id and
// --envelope ("--flag value" or "--flag=value") and --warm, --envelope set
// and the mode json. Anything else is not a child and goes to the command
// tree.
func Parse(args []string) (Options, bool) {
	var o Options
	o.Mode = "json"
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(args[i], "=")
		var dst *string
		switch name {
		case "--warm":
			if hasVal {
				return Options{}, false
			}
			o.Warm = true
			continue
		case "--envelope":
			dst = &o.Envelope
		case "--task-id":
			dst = &o.TaskID
		case "--mode":
			dst = &o.Mode
		default:
			return Options{}, false
		}
		if !hasVal {
			if i+1 >= len(args) {
				return Options{}, false
			}
			i++
			val = args[i]
		}
		*dst = val
	}
	if o.Envelope == "" || o.Mode != "json" {
		return Options{}, false
	}
	return o, true
}

// Main runs a child without building the command tree: what brood-child's
// main is, and brood's own fast path for a child command line (see Parse).
// It finds the project from the working directory and reads settings and
// agent definitions only if the child may delegate. links are what the
// binary links beyond the protocol: brood's all (cli.Links); a lean child
// binary's, its provider's SDK alone (it refuses an envelope that may
// delegate, and its parent never gives it one).
func Main(ctx context.Context, stdio cmdutil.IO, opts Options, links cmdutil.Links) int {
	ctx = spawntrace.Child(ctx, stdio.Getenv) // a traced spawn's child marks "init": it is in its main
	f := cmdutil.NewFactory(stdio)
	f.Links = links
	opts.Factory = f
	if err := f.LoadDirs(); err != nil {
		fmt.Fprintln(f.Err, "brood:", err)
		return cmdutil.ExitFailed
	}
	if opts.Warm && !sandbox.Reexecuted() {
		// Started ahead of its task, already in its own process group,
		// cgroup and sandbox: nothing of the task is read until the parent
		// says start. EOF (or anything else) means it was not needed. (Its
		// sandbox's re-exec of itself, same arguments, was started: the
		// first image read the line.)
		if err := protocol.ReadStart(stdio.In); err != nil {
			return 0
		}
	}
	if err := Run(ctx, &opts); err != nil {
		fmt.Fprintln(f.Err, "brood:", err)
		return cmdutil.ExitFailed
	}
	return 0
}
