package isolate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/tool"
)

// EditHold is what an in-place writer's view can make of its Edit and
// Write deny rules. The kernel holds a rule only where it names one path
// that exists at spawn, reached through no link (a literal such as
// `Edit(.env.production)` or `Edit(migrations/**)`, whose directory is
// then bound read-only whole, so nothing can be made in it either), or a
// path outside what the writer may write at all (its tree and --add-dir
// directories). The others — a bare rule, a pattern whose matches can be
// made anew (`Edit(**/*.pem)`, `Edit(.env)` at any depth), a literal absent
// at spawn or reached through a link — are Unheld: such a writer runs
// isolated instead (its landing judges every path it writes), or its
// result says they are checked per command only (review40 P2-A, P2-B).
// Nothing is walked: only literals are looked at.
type EditHold struct {
	// Paths are bound read-only over themselves in the writer's view.
	Paths []string
	// Unheld are the rules (as the user wrote them) the view cannot hold,
	// each with why.
	Unheld []string
}

// Held says the view holds every Edit and Write deny rule.
func (h EditHold) Held() bool { return len(h.Unheld) == 0 }

// Rules names the unheld rules in one line.
func (h EditHold) Rules() string { return strings.Join(h.Unheld, "; ") }

// editRule is one Edit, Write, MultiEdit or NotebookEdit deny rule of
// env's: its text and specifier ("" for a bare rule).
type editRule struct{ text, spec string }

// editRules are env's Edit and Write deny rules, none for a read-only
// child (it writes nothing). A rule that does not parse is kept bare: it
// cannot be held.
func editRules(env *dispatch.Envelope) []editRule {
	if env.ReadOnly {
		return nil
	}
	var out []editRule
	for _, r := range env.Permissions.Deny {
		name, _, _ := strings.Cut(strings.TrimSpace(r), "(")
		switch tool.CanonicalName(strings.TrimSpace(name)) {
		case "Edit", "Write", "MultiEdit", "NotebookEdit":
		default:
			continue
		}
		perms, err := tool.NewPermissions("", nil, []string{r}, nil)
		if err != nil {
			out = append(out, editRule{text: r})
			continue
		}
		specs, all := perms.EditDenies()
		if all || len(specs) == 0 {
			out = append(out, editRule{text: r})
			continue
		}
		for _, s := range specs {
			out = append(out, editRule{text: r, spec: s})
		}
	}
	return out
}

// EditRulesUnheld are all of env's Edit and Write deny rules, each said
// to be unheld for why: a writer the kernel cannot hold at all.
func EditRulesUnheld(env *dispatch.Envelope, why string) []string {
	var out []string
	for _, r := range editRules(env) {
		if t := fmt.Sprintf("%s (%s)", r.text, why); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// HoldingEdits is v with paths (EditHold.Paths) bound read-only too.
func (v View) HoldingEdits(paths []string) View {
	v.ReadOnly = slices.Clone(v.ReadOnly)
	for _, p := range paths {
		if !slices.Contains(v.ReadOnly, p) {
			v.ReadOnly = append(v.ReadOnly, p)
		}
	}
	return v
}

// HasEditDeny reports whether env's writer has an Edit or Write deny rule.
func HasEditDeny(env *dispatch.Envelope) bool { return len(editRules(env)) > 0 }

// EditHoldFor is EditHold for an in-place writer of env whose tree is
// root (WorkRoot, links resolved).
func EditHoldFor(env *dispatch.Envelope, root string) EditHold {
	return editHold(env, root, "")
}

// EditHoldWithoutView is EditHoldFor where no view can be made for the
// writer (a child's own writer: a child cannot mount; no user namespaces):
// a literal the view would have bound read-only is unheld, for noView; only
// what the writer cannot write at all stays held (review41 P1-2).
func EditHoldWithoutView(env *dispatch.Envelope, root, noView string) EditHold {
	return editHold(env, root, noView)
}

// editHold is EditHoldFor, or EditHoldWithoutView where noView is not "".
func editHold(env *dispatch.Envelope, root, noView string) EditHold {
	var h EditHold
	rules := editRules(env)
	if len(rules) == 0 {
		return h
	}
	ws := filepath.Clean(env.Workspace)
	realWS := Resolved(ws)
	home, _ := os.UserHomeDir()
	writable := append([]string{root}, addDirs(env.AddDirs, nil)...)
	for _, r := range rules {
		why := ""
		if r.spec == "" {
			why = "a rule for every path"
		} else if p, literal, ok := denyBase(r.spec, ws, home); !ok {
			continue // a home-relative rule without a home matches nothing
		} else if !literal {
			why = "a pattern: what it matches can be made anew"
		} else {
			if rel, err := filepath.Rel(ws, p); err == nil && within(ws, p) {
				// (The workspace's own links, above what it writes,
				// are not the writer's to change.)
				p = filepath.Join(realWS, rel)
			}
			var bind string
			bind, why = holdLiteral(p, writable)
			if bind != "" && noView != "" {
				bind, why = "", noView
			}
			if bind != "" && !slices.Contains(h.Paths, bind) {
				h.Paths = append(h.Paths, bind)
			}
		}
		if why != "" {
			h.Unheld = append(h.Unheld, fmt.Sprintf("%s (%s)", r.text, why))
		}
	}
	return h
}

// holdLiteral is how the view holds the literal path p of an Edit deny:
// the path to bind read-only, or why it cannot be held ("" and "" where
// the writer cannot write it at all). writable[0] is its tree, the rest
// its added directories.
func holdLiteral(p string, writable []string) (bind, why string) {
	p = filepath.Clean(p)
	real := tool.ResolveLinks(p)
	reach := func(q string) bool {
		return slices.ContainsFunc(writable, func(w string) bool { return within(w, q) || within(q, w) })
	}
	if !reach(p) && !reach(real) {
		return "", "" // outside what it writes: its Landlock domain holds it
	}
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return "", "absent at spawn"
	case real != p || fi.Mode()&os.ModeSymlink != 0:
		return "", "reached through a symbolic link"
	case slices.ContainsFunc(writable, func(w string) bool { return within(p, w) }):
		return "", "it holds the whole tree"
	case !within(writable[0], p):
		// (The view pins no directory of an added one: it could be moved
		// aside. An isolated writer writes none of them.)
		return "", "in an added directory (--add-dir)"
	}
	return p, ""
}
