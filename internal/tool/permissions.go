package tool

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/trust"
)

// Mode is the permission mode: what happens to a call no rule speaks about.
type Mode string

const (
	// ModeDefault allows read-only tools and asks for everything else.
	ModeDefault Mode = "default"
	// ModeAcceptEdits also allows Write and Edit inside the workspace.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModeBypass allows everything that no deny rule forbids.
	ModeBypass Mode = "bypassPermissions"
	// ModePlan allows only read-only tools, whatever the allow rules say.
	ModePlan Mode = "plan"
	// ModeDontAsk is ModeDefault with every ask turned into a denial.
	ModeDontAsk Mode = "dontAsk"
)

// ParseMode reads a mode name as Claude Code and brood settings write it;
// "readOnly" and "read-only" are accepted for plan, the empty string for
// default.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "default":
		return ModeDefault, nil
	case "acceptedits", "accept-edits":
		return ModeAcceptEdits, nil
	case "bypasspermissions", "bypass", "bypass-permissions":
		return ModeBypass, nil
	case "plan", "readonly", "read-only":
		return ModePlan, nil
	case "dontask", "dont-ask":
		return ModeDontAsk, nil
	}
	return "", fmt.Errorf("unknown permission mode %q: use default, acceptEdits, bypassPermissions, plan (read-only) or dontAsk", s)
}

// Verdict is the outcome of a permission check.
type Verdict int

const (
	Allow Verdict = iota + 1
	Deny
	Ask
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Deny:
		return "deny"
	case Ask:
		return "ask"
	}
	return "unknown"
}

// Decision is the answer to one Check, with enough detail to explain it.
type Decision struct {
	Verdict Verdict
	// Rule is the rule that decided, as written in its list; empty when the
	// mode decided.
	Rule string
	// Reason is a short sentence saying why ("matched deny rule ...").
	Reason string
	// Subject is what was checked: the command, the absolute path, or empty
	// for a tool without one.
	Subject string
	// Suggest lists the rules that together would allow this call, for an
	// Ask: a Bash prefix rule, and a Write rule for each file a redirection
	// writes that no rule or mode allows yet.
	Suggest []string
	// Held are the untrusted project's allow rules (WithHeld) that would
	// allow this call, for an Ask, and HeldAlso what else trusting the
	// project would grant, in brood's words.
	Held     []trust.HeldRule
	HeldAlso []string
	// RuleFiles are the settings files that name Rule, for an ask rule
	// (WithAskFrom): where to remove it.
	RuleFiles []string
}

// Permissions decides which tool calls may run. It is immutable after
// NewPermissions and safe for concurrent use.
type Permissions struct {
	mode             Mode
	allow, deny, ask []Rule
	// configWrites lets tools write brood's configuration (the user's
	// agents.allow_config_changes); unset, no rule or mode can.
	configWrites bool
	// held are the allow rules an untrusted project's settings hold back,
	// parsed, with their files: they allow nothing (WithHeld); heldAlso
	// is what else trusting the project grants, in brood's words.
	held     []heldRule
	heldAlso []string
	// askFrom are the settings files of each ask rule (WithAskFrom).
	askFrom map[string][]string
	// verifying: this is a copy that checks a suggestion (workable).
	verifying bool
	// only narrows the tools an untrusted project agent's specifiers name
	// (WithOnly).
	only *onlyRules
}

// readOnlyBuiltins are the tools Check treats as read-only when it is asked
// by name; Set.Run uses the tool's own ReadOnly instead.
var readOnlyBuiltins = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"Read": true, "Glob": true, "Grep": true, "LS": true}
})

// Check decides whether a call of the named tool with this input may run in
// workspace (nil Permissions allow everything). Deny rules beat ask rules, which beat allow rules; when no rule
// matches, the mode decides. A tool Check does not know is treated as one
// that can change things.
func (p *Permissions) Check(toolName string, input json.RawMessage, workspace string) Decision {
	name := CanonicalName(toolName)
	if p == nil {
		return Decision{Verdict: Allow, Reason: "no permission rules are set"}
	}
	return p.check(name, readOnlyBuiltins()[name], input, workspace)
}

// call is one tool call reduced to what rules match against.
type call struct {
	tool      string
	readOnly  bool
	kind      int
	subject   string   // command or absolute path
	parts     []string // Bash: the simple commands of the line
	names     []string // Bash: the same, normalised for deny and ask rules
	unsafe    string   // Bash: why no allow rule may approve the line
	writes    []string // Bash: absolute paths its redirections write
	rawWrites []string // Bash: the same as written
	cmds      []shCmd  // Bash: the simple commands as their programs see them
	chdir     bool     // Bash: the line changes directory
	opaque    bool     // Bash: a program only the shell can spell out
	workspace string
}

func newCall(tool string, readOnly bool, input json.RawMessage, workspace string) call {
	c := call{tool: tool, readOnly: readOnly, kind: subjectKind(tool), workspace: workspace}
	// The subject is the tool's own field (SubjectField) and no other:
	// Set.Run has refused a key the tool's schema does not list.
	text := subjectText(tool, input)
	switch c.kind {
	case subjectCommand:
		c.subject = strings.TrimSpace(text)
		sl := parseShell(c.subject)
		c.parts, c.names, c.unsafe, c.opaque = sl.parts, sl.names, sl.unsafe, sl.opaque
		c.cmds, c.chdir, c.rawWrites = sl.cmds, sl.chdir, sl.writes
		for _, w := range sl.writes {
			c.writes = append(c.writes, resolvePath(workspace, w))
		}
	case subjectPath:
		c.subject = pathSubject(tool, input, workspace)
	case subjectNone:
		c.subject = text // Task's subagent_type; "" for a tool with no field
		if tool == "WebFetch" {
			c.subject = webFetchSubject(text)
		}
	}
	return c
}

// resolvePath makes p absolute against dir, expanding a leading "~/".
func resolvePath(dir, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if p == "" {
		p = dir
	} else if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// inside reports whether the absolute path p is dir or below it.
func inside(dir, p string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ruleTools lists the rule tool names that cover a call of tool: as in
// Claude Code, Read rules also cover the tools that read (Glob, Grep, LS)
// and Edit rules cover every tool that edits (Write, MultiEdit).
func ruleTools(tool string) []string {
	switch tool {
	case "Glob", "Grep", "LS":
		return []string{tool, "Read"}
	case "Write", "MultiEdit", "NotebookEdit":
		return []string{tool, "Edit"}
	}
	// An MCP tool (mcp__server__tool) is also covered by a rule for its
	// whole server: mcp__server or mcp__server__*.
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		if server, _, ok := strings.Cut(rest, "__"); ok && server != "" {
			return []string{tool, "mcp__" + server, "mcp__" + server + "__*"}
		}
	}
	return []string{tool}
}

// matches reports whether r covers the whole call. For a Bash line every
// simple command must be covered (allow); for deny, any one is enough, which
// is the caller's concern via matchesAny.
func (r Rule) coversPart(c call, part string) bool {
	found := false
	for _, t := range ruleTools(c.tool) {
		if r.Tool == t {
			found = true
		}
	}
	if !found {
		return false
	}
	if r.Specifier == "" {
		return true
	}
	switch c.kind {
	case subjectCommand:
		return matchCommand(r.Specifier, part)
	case subjectPath:
		return matchPath(r.Specifier, c.subject, c.workspace)
	}
	return r.Specifier == c.subject
}

// firstMatch returns the first rule covering at least one part (any=true)
// or every part (any=false) of the call. Deny and ask rules (any) also see
// the normalised commands, so a different spelling cannot escape them.
func firstMatch(rules []Rule, c call, any bool) (Rule, bool) {
	parts := c.parts
	if c.kind != subjectCommand || len(parts) == 0 {
		parts = []string{c.subject}
	}
	if any {
		parts = append(append([]string(nil), parts...), c.names...)
		for _, r := range rules {
			for _, part := range parts {
				if r.coversPart(c, part) {
					return r, true
				}
			}
		}
		return Rule{}, false
	}
	// Every part must be covered, possibly by different rules; report the
	// rule that covered the first part.
	var first Rule
	for i, part := range parts {
		ok := false
		for _, r := range rules {
			if r.coversPart(c, part) {
				if i == 0 {
					first = r
				}
				ok = true
				break
			}
		}
		if !ok {
			return Rule{}, false
		}
	}
	return first, true
}

// planRefusal is plan mode's reason for refusing a tool that may write.
const planRefusal = "plan (read-only) mode allows only read-only tools"

// checkTool is check for a call of t: a tool that writes nothing itself
// but may start something that does (ReadOnlyByInput: Task) is read-only
// in plan mode when this call is, and a refusal says why it is not.
func (p *Permissions) checkTool(t Tool, input json.RawMessage, workspace string) Decision {
	readOnly, why := t.ReadOnly(), ""
	if r, ok := t.(ReadOnlyByInput); ok && !readOnly && p.mode == ModePlan {
		readOnly, why = r.ReadOnlyCall(input)
	}
	d := p.check(CanonicalName(t.Spec().Name), readOnly, input, workspace)
	if d.Verdict == Deny && d.Reason == planRefusal && why != "" {
		d.Reason += ": " + why
	}
	return d
}

func (p *Permissions) check(tool string, readOnly bool, input json.RawMessage, workspace string) Decision {
	if d, out := p.outsideOnly(tool, readOnly, input, workspace); out {
		return d
	}
	d := p.checkRules(tool, readOnly, input, workspace)
	if d.Verdict == Ask && len(d.Suggest) > 0 && len(p.held) > 0 {
		d.Held = p.heldFor(tool, readOnly, input, workspace)
		if len(d.Held) > 0 {
			d.HeldAlso = p.heldAlso
		}
	}
	return d
}

// checkRules is check without the held-back rules.
func (p *Permissions) checkRules(tool string, readOnly bool, input json.RawMessage, workspace string) Decision {
	c := newCall(tool, readOnly, input, workspace)
	if !p.configWrites {
		if ws := configWrites(c); len(ws) > 0 {
			return configDenial(c, ws)
		}
	}
	d := p.checkCall(c)
	if c.kind == subjectPath {
		// A path is judged as written and as the file it really is: a
		// symlink inside the workspace must not lead a write (or a denied
		// read) somewhere the rules would refuse.
		if real := ResolveLinks(c.subject); real != c.subject {
			c2 := c
			c2.subject, c2.workspace = real, ResolveLinks(c.workspace)
			if d2 := p.checkCall(c2); stricter(d2, d) {
				d2.Subject = c.subject
				d2.Reason += " (" + c.subject + " is a link to " + real + ")"
				return d2
			}
		}
	}
	return d
}

func hasRulesFor(rules []Rule, tool string) bool {
	for _, r := range rules {
		if r.Tool == tool {
			return true
		}
	}
	return false
}

// stricter reports whether a refuses more than b (deny > ask > allow).
func stricter(a, b Decision) bool {
	rank := func(v Verdict) int {
		switch v {
		case Deny:
			return 2
		case Ask:
			return 1
		}
		return 0
	}
	return rank(a.Verdict) > rank(b.Verdict)
}

// ResolveLinks resolves the symlinks of p's longest existing prefix (the
// file itself may not exist yet): a rule's path and a confinement's hidden
// path are judged where they really are.
func ResolveLinks(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func (p *Permissions) checkCall(c call) Decision {
	tool, readOnly, workspace := c.tool, c.readOnly, c.workspace
	d := Decision{Subject: c.subject}
	if r, ok := firstMatch(p.deny, c, true); ok {
		d.Verdict, d.Rule, d.Reason = Deny, r.String(), fmt.Sprintf("matched deny rule %q", r.String())
		return d
	}
	if p.mode == ModePlan && !readOnly {
		d.Verdict, d.Reason = Deny, planRefusal
		return d
	}
	if c.opaque && hasRulesFor(p.deny, tool) {
		// A deny rule might match what the shell would make of it: a human
		// decides, whatever the mode.
		d.Verdict, d.Reason = Ask, "the command spells a program only the shell can resolve, so the deny rules cannot be checked"
		return p.dontAsk(d)
	}
	if r, ok := firstMatch(p.ask, c, true); ok {
		if p.mode == ModeBypass {
			d.Verdict, d.Rule, d.Reason = Allow, r.String(), "bypassPermissions mode answers every ask with yes"
			return d
		}
		// No allow rule can outvote an ask rule, so there is nothing to suggest.
		d.Verdict, d.Rule, d.Reason = Ask, r.String(), fmt.Sprintf("matched ask rule %q", r.String())
		d.RuleFiles = p.askFrom[d.Rule]
		return p.dontAsk(d)
	}
	if d, refused := p.checkWrites(c); refused {
		return d
	}
	if r, ok := exactLine(p.allow, c); ok {
		// The user approved this very line, redirections included.
		d.Verdict, d.Rule, d.Reason = Allow, r.String(), fmt.Sprintf("matched allow rule %q", r.String())
		return d
	}
	d, missing, decided := p.byAllowRules(c, d)
	if decided {
		return d
	}
	switch {
	case p.mode == ModeBypass:
		d.Verdict, d.Reason = Allow, "bypassPermissions mode"
	case readOnly && tool != "WebFetch":
		// (WebFetch changes no file but reaches the network: it needs a rule.)
		d.Verdict, d.Reason = Allow, "read-only tools are allowed"
	case p.mode == ModeAcceptEdits && isEditTool(tool) && inside(workspace, c.subject):
		d.Verdict, d.Reason = Allow, "acceptEdits mode allows edits inside the workspace"
	default:
		d.Verdict, d.Reason = Ask, "no allow rule matches"
		d.Suggest = p.workable(c, append(p.suggestRules(c), p.writeRules(c, missing)...))
	}
	return p.dontAsk(d)
}

func (p *Permissions) dontAsk(d Decision) Decision {
	if p.mode == ModeDontAsk && d.Verdict == Ask {
		d.Verdict, d.Reason = Deny, d.Reason+" (dontAsk mode denies every ask)"
	}
	return d
}

func isEditTool(tool string) bool {
	switch tool {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		return true
	}
	return false
}

// subcommandTools are programs whose first argument names what they do, so
// a suggested rule keeps it: "git push" rather than all of git.
var subcommandTools = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"git": true, "go": true, "npm": true, "pnpm": true, "yarn": true, "npx": true,
		"cargo": true, "docker": true, "kubectl": true, "make": true, "pip": true, "bazel": true, "bazelisk": true,
		"uv": true, "bun": true, "deno": true, "gh": true, "poetry": true,
	}
})

// suggestRules names the narrowest useful rules that would allow c: the
// command (and subcommand) prefix of each Bash part not already allowed, or
// the file's path relative to the workspace.
func (p *Permissions) suggestRules(c call) []string {
	switch c.kind {
	case subjectCommand:
		var out []string
		seen := map[string]bool{}
		for _, pt := range c.parts {
			if _, ok := firstMatch(p.allow, call{tool: c.tool, kind: c.kind, subject: pt, parts: []string{pt}}, false); ok {
				continue
			}
			r := "Bash"
			if f := strings.Fields(pt); len(f) > 0 {
				r = "Bash(" + commandPrefix(f) + ":*)"
			}
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			out = []string{"Bash"}
		}
		return out
	case subjectPath:
		spec := escapeGlob(c.subject)
		if inside(c.workspace, c.subject) {
			if rel, err := filepath.Rel(c.workspace, c.subject); err == nil {
				spec = escapeGlob(filepath.ToSlash(rel))
				if spec == "." {
					spec = "**"
				}
			}
		}
		return []string{c.tool + "(" + spec + ")"}
	}
	if c.subject != "" {
		return []string{c.tool + "(" + c.subject + ")"}
	}
	return []string{c.tool}
}

// escapeGlob quotes the glob metacharacters in a literal path so a suggested
// rule matches exactly that file.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// deniesRead reports whether a deny rule forbids reading the absolute path p,
// so that Glob, Grep and LS leave out files a Read of them would be refused.
func (p *Permissions) deniesRead(path, workspace string) bool {
	if p == nil {
		return false
	}
	c := call{tool: "Read", kind: subjectPath, subject: path, workspace: workspace}
	_, ok := firstMatch(p.deny, c, true)
	return ok
}

// checkWrites refuses a Bash line whose redirection writes a file that a
// Write or Edit deny rule (or plan mode) forbids: a deny anywhere wins, also
// over a rule for all of Bash.
func (p *Permissions) checkWrites(c call) (Decision, bool) {
	for _, path := range c.writes {
		w := call{tool: "Write", kind: subjectPath, subject: path, workspace: c.workspace}
		if r, ok := firstMatch(p.deny, w, true); ok {
			return Decision{Verdict: Deny, Rule: r.String(), Subject: c.subject,
				Reason: fmt.Sprintf("it writes %s, which deny rule %q forbids", path, r.String())}, true
		}
	}
	return Decision{}, false
}
