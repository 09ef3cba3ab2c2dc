// Package cli is brood's command line: the root command, which turns flags,
// environment and settings into one of the commands. Each noun lives in its
// own package (internal/cli/<noun>, a file per verb, in the GitHub CLI's
// shape: an Options struct, NewCmdX(f, runF), xRun(opts)); what they share
// is in cmdutil. Commands hold no engine logic of their own; they call into
// agent, delegate and the packages below them.
package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/call/jsonschema"
	"github.com/broodhq/brood/internal/cli/agents"
	"github.com/broodhq/brood/internal/cli/bench"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/cli/config"
	"github.com/broodhq/brood/internal/cli/doctor"
	"github.com/broodhq/brood/internal/cli/fleet"
	"github.com/broodhq/brood/internal/cli/interactive"
	mcpcmd "github.com/broodhq/brood/internal/cli/mcp"
	"github.com/broodhq/brood/internal/cli/run"
	"github.com/broodhq/brood/internal/cli/subagent"
	"github.com/broodhq/brood/internal/cli/tasks"
	"github.com/broodhq/brood/internal/cli/trust"
	"github.com/broodhq/brood/internal/cli/version"
	"github.com/broodhq/brood/internal/cli/worker"
	"github.com/broodhq/brood/internal/cli/workflow"
	"github.com/broodhq/brood/internal/model/anthropic"
	"github.com/broodhq/brood/internal/model/openai"
	"github.com/broodhq/brood/internal/model/provider"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/tui"
	"github.com/broodhq/brood/internal/workflowtool"
)

// Version is set at build time with -ldflags "-X .../cli.Version=v1.2.3".
var Version = "dev"

// IO is the process's streams and environment.
type IO = cmdutil.IO

// ExitCode wraps err so that Main exits with code. A nil err means
// "already reported".
func ExitCode(code int, err error) error { return cmdutil.ExitCode(code, err) }

// Links are everything brood links beyond the child protocol
// (cmdutil.Links): the lean child binaries link less, brood-fleet more
// (the fleet and the OpenTelemetry exporters).
func Links() cmdutil.Links {
	return cmdutil.Links{
		Delegation: spawn.Extras{Schemas: jsonschema.Compile, Tools: workflowtool.Tools},
		Models:     provider.Adapters{Anthropic: anthropic.Adapter, OpenAI: openai.Adapter},
	}
}

// Main runs brood with args and returns the process exit status.
func Main(ctx context.Context, stdio IO, args []string) int {
	return Run(ctx, stdio, args, Links())
}

// Run runs the command line with args on what its binary links: brood's
// Links, or brood-fleet's (those and the fleet: root/fleetlink).
func Run(ctx context.Context, stdio IO, args []string, links cmdutil.Links) int {
	f := cmdutil.NewFactory(stdio)
	f.Links, f.Args = links, args
	root := newCmdRoot(f, nounFor(args))
	args = printArgs(root, args)
	args, swallowed := cmdutil.ExpandVariadic(args)
	for _, s := range swallowed {
		fmt.Fprintf(f.Err, "brood: %q was read as a value of %s, not as a prompt · put a prompt before %s or after --\n", s.Value, s.Flag, s.Flag)
	}
	root.SetArgs(args)
	root.SetIn(f.In)
	root.SetOut(f.Out)
	root.SetErr(f.Err)
	err := root.ExecuteContext(ctx)
	if err == nil && !f.OutBroken() {
		return 0
	}
	if errors.Is(err, agents.ErrCheckFailed) {
		return 1 // check printed every problem already
	}
	if errors.Is(err, syscall.EPIPE) || f.OutBroken() {
		// The reader went away (brood ... | head): end quietly with the
		// status a process killed by SIGPIPE has, as other CLI tools do.
		return cmdutil.ExitBrokenPipe
	}
	var ee *cmdutil.ExitError
	if errors.As(err, &ee) && !cmdutil.IsUsage(err) {
		if ee.Err != nil && ee.Err.Error() != "" {
			fmt.Fprintln(f.Err, "brood:", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintln(f.Err, "brood:", err)
	if cmdutil.IsUsage(err) {
		fmt.Fprintf(f.Err, "Run '%s --help' for usage.\n", usagePath(root, args))
		return cmdutil.ExitUsage
	}
	return cmdutil.ExitFailed
}

// printArgs turns Claude Code's `claude -p PROMPT` habit into `brood run`:
// flags before any command, among them -p or --print, mean run.
func printArgs(root *cobra.Command, args []string) []string {
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") {
		return args
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-p" || a == "--print" || strings.HasPrefix(a, "--print=") {
			return append([]string{"run"}, args...)
		}
		if !strings.HasPrefix(a, "-") {
			if c, _, err := root.Find([]string{a}); err == nil && c != root {
				return args // a command follows the flags
			}
		}
	}
	return args
}

// usagePath is the command the arguments named ("brood tasks show"), for
// the hint after a usage error.
func usagePath(root *cobra.Command, args []string) string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		return root.Name()
	}
	return cmd.CommandPath()
}

// NewCmdRoot builds the root command with every noun under it.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command { return newCmdRoot(f, "") }

// noun is a command under brood, built only when it may run.
type noun struct {
	name  string
	build func() *cobra.Command
}

// nouns are brood's commands, each by the name it answers to
// (TestNounNames).
func nouns(f *cmdutil.Factory, versionLine string) []noun {
	return []noun{
		{"run", func() *cobra.Command { return run.NewCmdRun(f, versionLine, nil) }},
		{"demo", func() *cobra.Command { return run.NewCmdDemo(f, nil) }},
		{"version", func() *cobra.Command { return version.NewCmdVersion(f, Version, nil) }},
		{"agents", func() *cobra.Command { return agents.NewCmdAgents(f, nil) }},
		{"tasks", func() *cobra.Command { return tasks.NewCmdTasks(f, nil) }},
		{"subagent", func() *cobra.Command { return subagent.NewCmdSubagent(f, nil) }},
		{"doctor", func() *cobra.Command { return doctor.NewCmdDoctor(f, nil) }},
		{"bench", func() *cobra.Command { return bench.NewCmdBench(f, nil) }},
		{"mcp", func() *cobra.Command { return mcpcmd.NewCmdMCP(f, Version, nil) }},
		{"config", func() *cobra.Command { return config.NewCmdConfig(f) }},
		{"workflow", func() *cobra.Command { return workflow.NewCmdWorkflow(f, nil) }},
		{"worker", func() *cobra.Command { return worker.NewCmdWorker(f, nil) }},
		{"fleet", func() *cobra.Command { return fleet.NewCmdFleet(f) }},
		{"trust", func() *cobra.Command { return trust.NewCmdTrust(f, nil) }},
	}
}

// nounFor is the command args run when their first word names one (brood
// run ...): the only noun Run builds, its thirteen siblings' flags and
// commands left unmade (a tenth of a millisecond of every start). ""
// (flags first, help, a prompt, a typo): the whole tree.
func nounFor(args []string) string {
	if len(args) == 0 {
		return ""
	}
	for _, c := range nouns(nil, "") {
		if c.name == args[0] {
			return c.name
		}
	}
	return ""
}

// newCmdRoot is NewCmdRoot with only the noun named only under it ("":
// every noun).
func newCmdRoot(f *cmdutil.Factory, only string) *cobra.Command {
	// The version line reads the build info (every module's path and
	// sum): once, for --version and for run's init line.
	versionLine := version.String(Version)
	root := &cobra.Command{
		Use: "brood",
		Example: `  brood                                   # interactive
  brood -p "fix the failing test"          # headless
  git diff | brood -p "review this diff"
  brood tasks`,
		Short: "A runtime for coding agents that delegate to subagents in isolated child processes",
		Long: `brood runs an LLM coding agent whose main skill is delegation: the agent hands
self-contained work to specialised subagents (explore, plan, general-purpose, or
your own Claude Code agent files) that run as isolated child processes, bounded
in depth, number and wall-clock time, and gets back only a verified, compact result.

Start with:
  brood                           the interactive mode (on a terminal; --continue or --resume ID reopens a session)
  brood demo                      a scripted run over this directory (no API key needed)
  brood run "fix the flaky test"  one agent to completion (needs a model, see below)
  brood agents                    the subagents brood can delegate to

Models are chosen as provider/model with --model, BROOD_MODEL or model = "..." in
.brood/settings.toml: anthropic/claude-sonnet-5-5 (ANTHROPIC_API_KEY), openai/gpt-5
(OPENAI_API_KEY, OPENAI_BASE_URL), ollama/qwen3, vllm/..., llamacpp/...,
or script:FILE for the offline scripted model.

` + cmdutil.ExitStatusHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if versionAsked(cmd) {
				return nil // RunE says it: no settings are read for it
			}
			if childLine(cmd) {
				// A child's command line (BROOD_CHILD_ARGS): nothing is
				// read nor started before its sandbox, and its settings
				// only under the root's grant (runChild, childSetup).
				return nil
			}
			// claude -p's --setting-sources (brood run) chooses the
			// settings files before they are read.
			if fl := cmd.Flags().Lookup("setting-sources"); fl != nil && fl.Changed {
				only, err := settings.ParseSettingSources(fl.Value.String())
				if err != nil {
					return cmdutil.ExitCode(cmdutil.ExitFailed, err)
				}
				f.SettingSources = only
			}
			// Read quietly: a command that needs the fleet, which brood
			// does not link, is handed whole to brood-fleet now, before
			// anything is said, written or asked.
			loadErr := f.LoadQuiet()
			if err := f.HandOffFleet(cmd); err != nil {
				return err
			}
			if runsAgents(cmd) {
				if err := f.HandOffTelemetry(cmd); err != nil {
					return err
				}
			}
			f.PrintWarnings()
			if err := loadErr; err != nil {
				if runsAgents(cmd) || f.Cwd == "" {
					return err
				}
				// A command that runs no agent works on without the
				// settings (brood's defaults): a broken file must not
				// keep you from brood tasks, trust or doctor.
				fmt.Fprintln(f.Err, "brood: warning:", err, "(settings not read for this command)")
			}
			if f.ProjectRoot != "" {
				// An in-place writer's guard whose brood died first (kill
				// -9, a crash): what it must put back is put back now, by
				// every brood in the project (one directory read when
				// nothing is pending).
				for _, l := range spawn.RestoreCrashedGuards(f.ProjectRoot) {
					fmt.Fprintln(f.Err, l)
				}
			}
			if n := f.Settings.Trust.Notice(); n != "" && noticeWanted(cmd) {
				fmt.Fprintln(f.Err, n)
			}
			spawntrace.RootMark(cmd.Context(), "settings")
			return nil
		},
	}
	root.PersistentFlags().BoolVar(&f.TrustProject, "trust-project", false, "honour this project's settings files for this run even where they allow more than the defaults (see brood trust)")
	childOpts := addChildFlags(root)
	tuiOpts := interactive.AddFlags(root, f)
	// What the interactive mode does that other verbs own.
	tuiOpts.Kill = func(ctx context.Context, id string) error { _, _, err := tasks.Kill(ctx, f, id); return err }
	tuiOpts.Workflow = func(file string, inputs []string) (tui.Workflow, error) {
		p, err := workflow.Prepare(f, file, inputs)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	addVersionFlag(root)
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if versionAsked(cmd) {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "brood %s\n", versionLine)
			return err
		}
		if childOpts.Active() {
			return runChild(cmd.Context(), f, *childOpts)
		}
		// Bare brood on a terminal is the interactive mode; anywhere else
		// (a pipe, CI) it prints the help, as it always has.
		if len(args) == 0 {
			if ran, err := interactive.Run(cmd.Context(), tuiOpts); ran || err != nil {
				return err
			}
		}
		return cmd.Help()
	}
	for _, c := range nouns(f, versionLine) {
		if only == "" || c.name == only {
			root.AddCommand(c.build())
		}
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
	})
	markUsageErrors(root)
	return root
}

// addVersionFlag gives root --version (-v) as cobra would for a Version,
// without cobra's version template: a template's execution keeps every
// exported method of every type in the binary (text/template reaches
// reflect.Value.MethodByName), most of the model SDKs.
func addVersionFlag(root *cobra.Command) {
	const usage = "version for brood"
	if root.Flags().ShorthandLookup("v") == nil {
		root.Flags().BoolP("version", "v", false, usage)
	} else {
		root.Flags().Bool("version", false, usage)
	}
}

// versionAsked says whether cmd is the root given --version.
func versionAsked(cmd *cobra.Command) bool {
	if cmd.HasParent() {
		return false
	}
	v, _ := cmd.Flags().GetBool("version")
	return v
}

// markUsageErrors makes every command's argument-count errors usage errors
// (exit status 2).
func markUsageErrors(cmd *cobra.Command) {
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		markUsageErrors(sub)
	}
}

// runsAgents reports whether cmd may run an agent, so that the project
// trust notice is worth a line: not for listings, records or brood trust.
// noticeWanted reports whether cmd prints the trust notice (what the
// untrusted project's files would allow and that it is not applied): the
// commands that run agents, where it changes what they may do, and brood
// config, which shows the settings; not those that only read records or
// plans (brood tasks, workflow list, show, validate, cancel), which would
// print the same long line every time.
func noticeWanted(cmd *cobra.Command) bool {
	if !runsAgents(cmd) {
		return false
	}
	path := strings.Fields(cmd.CommandPath())
	if len(path) > 2 && path[1] == "workflow" {
		return !slices.Contains([]string{"list", "show", "validate", "cancel"}, path[2])
	}
	return true
}

func runsAgents(cmd *cobra.Command) bool {
	path := strings.Fields(cmd.CommandPath()) // brood tasks resume ...
	if len(path) < 2 {
		return true // the root: the child protocol
	}
	switch path[1] {
	case "version", "trust", "doctor", "help", "completion", "agents", "fleet":
		return false
	case "tasks":
		return len(path) > 2 && (path[2] == "resume" || path[2] == "fork")
	}
	return true
}
