// Package doctor is the `brood doctor` command: it reports which
// isolation and sandbox mechanisms this machine offers, so a user can see
// why an isolated child used a git worktree instead of an overlay, or why a
// read-only agent was given no Bash. It only renders what packages isolate
// and sandbox probe; it decides nothing.
//
// The overlay probe re-executes the running binary, so the binary's main
// must call isolate.EnterFromEnv before anything else (brood's does).
package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/childexe"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/sandbox"
)

// Report is what `brood doctor --json` prints.
type Report struct {
	UserNamespaces   bool         `json:"user_namespaces"`
	OverlayInUserNS  bool         `json:"overlay_in_userns"`
	OverlayUserXattr bool         `json:"overlay_userxattr"`
	LandlockABI      int          `json:"landlock_abi"`
	NetworkNamespace bool         `json:"network_namespace"`
	Git              string       `json:"git"`
	WorktreeFallback bool         `json:"worktree_fallback"`
	Isolation        isolate.Mode `json:"isolation"`
	ReadOnlyBash     bool         `json:"read_only_bash"`
	// WriterGoCaches says what a writer's Go build and module caches
	// are: its task's own overlays over the user's, or, with no overlay
	// here, its task's own, empty at its start (isolate's gocache.go).
	WriterGoCaches string `json:"writer_go_caches"`
	// Containment is how a child's process tree is held (cgroup, pidns or
	// none), CgroupBase where children's cgroups are made, and
	// ContainmentNote why a better mechanism is not used.
	Containment     string `json:"containment"`
	CgroupBase      string `json:"cgroup_base,omitempty"`
	ContainmentNote string `json:"containment_note,omitempty"`
	// SignalScope: a child cannot signal its parent or siblings (Landlock
	// scoping, ABI 6).
	SignalScope bool `json:"signal_scope"`
	// LandlockInPlace: a child that mounts first (one in a new user
	// namespace) can put all its threads under Landlock in place, as a
	// read-only one does (a writer's domain with a scope, ABI 6, is applied
	// by re-executing whatever the build); false in a binary that links
	// cgo, where it re-executes itself once instead.
	LandlockInPlace bool `json:"landlock_in_place"`
	// ChildExe is the binary a parent runs for each subagent: brood-child
	// beside brood when it is the same build (else brood, and the reason is
	// in Problems["children"]).
	ChildExe string `json:"child_exe"`
	// ChildExeOpenAI is the same for subagents on an OpenAI-compatible
	// model (brood-child-openai; Problems["children-openai"]). A subagent
	// that may delegate, or any while telemetry is on, runs brood.
	ChildExeOpenAI string `json:"child_exe_openai"`
	// FleetExe is what runs brood worker, brood fleet and --engine
	// temporal: brood-fleet beside brood when it is the same build, else
	// why not (brood does not link the fleet; not a problem without one).
	FleetExe string            `json:"fleet_exe"`
	Problems map[string]string `json:"problems,omitempty"`
	// Confinement is, for each class of child, what this machine gives it
	// on each axis, and the fallback where it gives less.
	Confinement []Confinement `json:"confinement"`
	// Limits are a child's resource limits and network ban (limits.go).
	Limits *LimitsReport `json:"limits,omitempty"`
}

// Collect probes the machine. It takes a few tens of milliseconds (it starts
// short-lived processes in new namespaces).
func Collect(ctx context.Context) Report {
	sb := sandbox.Probe(ctx)
	iso := isolate.Probe(ctx)
	r := Report{
		UserNamespaces:   sb.UserNS,
		OverlayInUserNS:  iso.Overlay,
		OverlayUserXattr: iso.UserXattr,
		LandlockABI:      sb.LandlockABI,
		NetworkNamespace: sb.NetNS,
		Git:              iso.Git,
		WorktreeFallback: iso.Worktree,
		ReadOnlyBash:     sb.HoldsBashReadOnly(),
		Problems:         sb.Errors,
		SignalScope:      sb.LandlockABI >= 6,
		LandlockInPlace:  sandbox.InPlace(),
	}
	r.Containment, r.CgroupBase, r.ContainmentNote = pool.ProbeContainment(ctx, "auto")
	r.Limits = collectLimits(ctx)
	switch {
	case iso.Overlay:
		r.Isolation = isolate.ModeOverlay
	case iso.Worktree:
		r.Isolation = isolate.ModeWorktree
	default:
		r.Isolation = isolate.ModeNone
	}
	if !iso.Overlay && iso.Why != "" {
		r.Problems["overlay"] = iso.Why
	}
	r.WriterGoCaches = "their task's own: overlays mounted over yours at your caches' paths (yours read-only, what they write in their TMPDIR)"
	if !iso.Overlay {
		r.WriterGoCaches = "their task's own, empty at its start (no overlay here: each writer compiles std and its dependencies again)"
	}
	if exe, err := os.Executable(); err == nil {
		c := childexe.Find(exe)
		r.ChildExe = c.Path
		if !c.Lean {
			r.Problems["children"] = c.Why
		}
		c = childexe.FindNamed(exe, childexe.NameOpenAI)
		r.ChildExeOpenAI = c.Path
		if !c.Lean {
			r.Problems["children-openai"] = c.Why
		}
		if c = childexe.FindNamed(exe, childexe.NameFleet); c.Lean {
			r.FleetExe = c.Path
		} else {
			r.FleetExe = "nothing: " + c.Why
		}
	}
	if iso.Git == "" {
		r.Problems["git"] = "git not found on PATH: isolated children run in place"
	}
	if len(r.Problems) == 0 {
		r.Problems = nil
	}
	r.Confinement = confinements(r)
	return r
}

// Options are the flags of `brood doctor`.
type Options struct {
	Factory *cmdutil.Factory
	JSON    bool
}

// NewCmdDoctor builds `brood doctor`. runF replaces the probe and report.
func NewCmdDoctor(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use: "doctor",
		Example: `  brood doctor
  brood doctor --json`,
		Short: "Report which isolation and sandbox mechanisms this machine offers",
		Long: "Probe user namespaces, overlayfs inside a user namespace, the Landlock ABI,\n" +
			"network namespaces and git, and say what an isolated or read-only child gets.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			r := Collect(cmd.Context())
			if opts.JSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
			return render(cmd.OutOrStdout(), r)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON instead of text")
	return cmd
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// containment renders how children's process trees are held, in words.
func containment(r Report) string {
	switch r.Containment {
	case pool.ContainCgroup:
		return "a cgroup each, under " + r.CgroupBase + " (cgroup.kill)"
	case pool.ContainPIDNS:
		return "a PID namespace each (" + r.ContainmentNote + ")"
	}
	return "their session only: a process that leaves it may survive (" + r.ContainmentNote + ")"
}

func render(w io.Writer, r Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	landlock := "unavailable"
	if r.LandlockABI > 0 {
		landlock = fmt.Sprintf("ABI %d", r.LandlockABI)
	}
	switch {
	case r.LandlockABI == 0:
	case !r.LandlockInPlace:
		landlock += ", children that mount first re-execute to confine their threads (a cgo build: CGO_ENABLED=0 avoids it)"
	case r.LandlockABI >= 6:
		// A writer's scope must be one domain for all its threads.
		landlock += ", read-only children that mount first confine their threads in place, writers that do re-execute"
	default:
		landlock += ", children that mount first confine their threads in place"
	}
	git := r.Git
	if git == "" {
		git = "not found"
	}
	overlay := yesNo(r.OverlayInUserNS)
	if r.OverlayInUserNS && r.OverlayUserXattr {
		overlay += " (userxattr)"
	}
	rows := [][2]string{
		{"user namespaces", yesNo(r.UserNamespaces)},
		{"overlay in user namespace", overlay},
		{"landlock", landlock},
		{"network namespace", yesNo(r.NetworkNamespace)},
		{"git", git},
		{"worktree fallback", yesNo(r.WorktreeFallback)},
		{"isolated writers get", string(r.Isolation)},
		{"read-only agents get Bash", yesNo(r.ReadOnlyBash)},
		{"writers' Go caches", r.WriterGoCaches},
		{"children's processes held by", containment(r)},
		{"children can't signal the parent", yesNo(r.SignalScope)},
		{"children run", r.ChildExe},
		{"OpenAI-API children run", r.ChildExeOpenAI},
		{"fleet commands run", r.FleetExe},
	}
	rows = append(rows, limitRows(r.Limits)...)
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	for k, v := range r.Problems {
		fmt.Fprintf(tw, "note: %s\t%s\n", k, v)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return renderTable(w, r.Confinement)
}
