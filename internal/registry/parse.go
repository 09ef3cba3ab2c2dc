package registry

import (
	"errors"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Parse reads one agent file. It returns a nil Definition and no
// diagnostics for a file without frontmatter (its caller reports it:
// ErrNoFrontmatter), a nil Definition and at least one error diagnostic for a file that
// can't be used, and otherwise the definition with any warnings. It never
// panics, whatever the bytes.
func Parse(path string, data []byte, src Source) (*Definition, []Diagnostic) {
	p := &parsing{path: path}
	doc, err := split(normalize(data))
	if errors.Is(err, errNoFrontmatter) {
		if line := indentedFence(data); line > 0 {
			p.warn(line, "the frontmatter fence is indented: --- must start the line; the file is skipped")
			return nil, p.diags
		}
		return nil, nil
	}
	if err != nil {
		p.lineErr(err)
		return nil, p.diags
	}
	fm, err := parseFrontmatter(doc.front)
	if err != nil {
		p.lineErr(err)
		return nil, p.diags
	}
	if len(fm.quoted) > 0 {
		msg := "frontmatter is not valid YAML"
		if fm.strictErr != nil {
			msg += fmt.Sprintf(" (line %d: %s)", fm.strictErr.line, fm.strictErr.msg)
		}
		lines := make([]string, len(fm.quoted))
		for i, l := range fm.quoted {
			lines[i] = strconv.Itoa(l)
		}
		p.warn(fm.quoted[0], "%s; read it after quoting the value on line %s", msg, strings.Join(lines, ", "))
	}
	d := &Definition{
		Path:     path,
		Source:   src,
		AllTools: true,
		Prompt:   strings.TrimSpace(doc.body),
	}
	p.fields(d, fm.fields)
	p.delegationWithoutDelegate(d, fm.fields)
	sort.SliceStable(p.diags, func(i, j int) bool { return p.diags[i].Line < p.diags[j].Line })
	if HasErrors(p.diags) {
		return nil, p.diags
	}
	return d, p.diags
}

// parsing collects the diagnostics for one file.
type parsing struct {
	path  string
	diags []Diagnostic
}

func (p *parsing) warn(line int, format string, args ...any) {
	p.diags = append(p.diags, Diagnostic{Path: p.path, Line: line, Severity: SeverityWarning, Message: fmt.Sprintf(format, args...)})
}

func (p *parsing) errorf(line int, format string, args ...any) {
	p.diags = append(p.diags, Diagnostic{Path: p.path, Line: line, Severity: SeverityError, Message: fmt.Sprintf(format, args...)})
}

func (p *parsing) lineErr(err error) {
	var le *lineError
	if errors.As(err, &le) {
		p.errorf(le.line, "%s", le.msg)
		return
	}
	p.errorf(1, "%s", err)
}

// fieldKey folds the spellings authors use for one key (maxTurns,
// max_turns, max-turns) together.
func fieldKey(k string) string {
	return fold(k, "_-")
}

// fields applies every frontmatter entry to d.
func (p *parsing) fields(d *Definition, fields []field) {
	seen := map[string]int{}
	var tools, disallowed *field
	var nameLine int
	for i := range fields {
		f := &fields[i]
		k := fieldKey(f.key)
		if prev, dup := seen[k]; dup {
			p.warn(f.line, "%s is given again (first on line %d); the first one is used", f.key, prev)
			continue
		}
		seen[k] = f.line
		switch k {
		case "name":
			d.Name, nameLine = p.name(f), f.line
		case "description":
			d.Description = p.text(f)
		case "tools":
			tools = f
		case "disallowedtools":
			disallowed = f
		case "model":
			d.Model, d.modelLine = p.model(f), f.line
		case "effort":
			d.Effort = p.oneOf(f, "low", "medium", "high", "xhigh", "max")
		case "maxturns":
			if n, ok := p.count(f); ok {
				d.MaxTurns = n
			}
		case "background":
			d.Background, _ = p.boolean(f)
		case "delegate":
			p.delegate(d, f)
		case "isolation":
			d.Isolation = p.oneOf(f, "auto", "worktree", "none")
		case "timeout":
			d.Timeout = p.timeout(f)
		case "priority":
			d.Priority, d.HasPriority = p.integer(f)
		case "network":
			p.network(d, f)
		case "limits":
			p.limitsField(d, f)
		case "sections":
			d.Sections = p.list(f)
		case "permissionmode":
			d.PermissionMode = p.permissionMode(f)
		case "mcpservers":
			p.mcpServers(d, f)
		case "env":
			d.Env = p.envNames(f)
		case "sandbox":
			// brood's own key: "read-only" keeps the agent read-only even
			// with Bash, which the kernel sandbox then holds read-only (and
			// which is withdrawn where the kernel can't).
			d.SandboxReadOnly = p.oneOf(f, "read-only", "none") == "read-only"
		default:
			if d.Extra == nil {
				d.Extra = map[string]any{}
			}
			d.Extra[f.key] = f.value
		}
	}
	p.nameOrFile(d, seen, nameLine)
	if strings.TrimSpace(d.Description) == "" {
		line := 2
		if l, ok := seen["description"]; ok {
			line = l
		}
		p.errorf(line, "description is required")
	}
	d.nameLine = nameLine
	p.tools(d, tools, disallowed)
	p.checkMCP(d, mcpLine(fields))
	if d.SandboxReadOnly {
		d.ReadOnly = true
	}
}

// nameOrFile checks the name: a file without name: is named by its file
// name (hotl's rule) when that is a valid name.
func (p *parsing) nameOrFile(d *Definition, seen map[string]int, nameLine int) {
	if _, ok := seen["name"]; !ok {
		if d.Name = nameFromPath(p.path); d.Name == "" {
			p.errorf(2, "name is required: add name: to the frontmatter (the file name %q is not a usable agent name: ASCII letters, digits and - _ . : only, starting with a letter or digit)", path.Base(filepath.ToSlash(p.path)))
		}
	} else if d.Name == "" && !HasErrors(p.diags) {
		p.errorf(nameLine, "name is empty")
	}
}

// nameFromPath is the agent name a file without name: takes: its file
// name without .md, when that is a valid name ("" otherwise).
func nameFromPath(p string) string {
	base := path.Base(filepath.ToSlash(p))
	if ext := path.Ext(base); strings.EqualFold(ext, ".md") {
		base = base[:len(base)-len(ext)]
	}
	for i, r := range base {
		if !nameRune(i, r) {
			return ""
		}
	}
	return base
}

// nameRune reports whether r may stand at byte i of an agent name: ASCII
// letters and digits, and "-_.:" after the first. ASCII only, as Claude
// Code's names are: a letter of another script that looks like a Latin one
// (Cyrillic е in "еxplore") would pass for a built-in in every list the
// model, the TUI and `brood tasks` show (redteam19 P3-5).
func nameRune(i int, r rune) bool {
	return r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || i > 0 && strings.ContainsRune("-_.:", r))
}

// name validates the agent's identity: it is what the model passes as
// subagent_type, what delegate lists name and what users type on the command
// line, so it is ASCII letters, digits and "-_.:" only, starting with a
// letter or digit (nameRune).
func (p *parsing) name(f *field) string {
	s := strings.TrimSpace(p.text(f))
	for i, r := range s {
		if nameRune(i, r) {
			continue
		}
		p.errorf(f.line, "name %q must be ASCII letters, digits and - _ . : only, starting with a letter or digit", s)
		return ""
	}
	return s
}

// text reads a scalar as text; numbers and booleans are taken as written.
func (p *parsing) text(f *field) string {
	switch v := f.value.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(v)
	}
	p.errorf(f.line, "%s must be text, not a list or mapping", f.key)
	return ""
}

// model accepts inherit, the aliases, provider/model and anything that looks
// like a versioned model id (it has a digit or a dash: claude-opus-4-1,
// gpt-4o, o3). Anything else inherits with a warning, because a typo must
// not send a child to a model nobody chose.
func (p *parsing) model(f *field) string {
	s, ok := f.value.(string)
	s = strings.TrimSpace(s)
	if !ok || s == "" {
		p.warn(f.line, "model %v is not a model name; the parent's model is inherited", f.value)
		return ""
	}
	switch low := strings.ToLower(s); low {
	case "inherit":
		return ""
	case "sonnet", "opus", "haiku":
		return low
	}
	if provider, m, ok := strings.Cut(s, "/"); ok {
		if provider != "" && m != "" && !strings.ContainsAny(s, " \t") {
			return s
		}
	} else if !strings.ContainsAny(s, " \t") && strings.ContainsFunc(s, func(r rune) bool {
		return r == '-' || unicode.IsDigit(r)
	}) {
		return s
	}
	p.warn(f.line, "unknown model %q; the parent's model is inherited", s)
	return ""
}

// oneOf accepts a value from a fixed set, case-insensitively.
func (p *parsing) oneOf(f *field, allowed ...string) string {
	s := strings.ToLower(strings.TrimSpace(fmt.Sprint(f.value)))
	for _, a := range allowed {
		if s == a {
			return a
		}
	}
	p.warn(f.line, "%s: %q is not one of %s; ignored", f.key, fmt.Sprint(f.value), strings.Join(allowed, ", "))
	return ""
}

// permissionMode reads Claude Code's permissionMode key in its canonical
// spelling; an unknown mode is ignored with a warning (the parent's applies).
func (p *parsing) permissionMode(f *field) string {
	modes := map[string]string{"default": "default", "acceptedits": "acceptEdits", "bypasspermissions": "bypassPermissions", "plan": "plan", "dontask": "dontAsk"}
	if m, ok := modes[strings.ToLower(strings.TrimSpace(fmt.Sprint(f.value)))]; ok {
		return m
	}
	p.warn(f.line, "%s: %q is not one of default, acceptEdits, bypassPermissions, plan, dontAsk; the parent's mode applies", f.key, fmt.Sprint(f.value))
	return ""
}

// list reads a list of texts, or one comma-separated text.
func (p *parsing) list(f *field) []string {
	var out []string
	switch v := f.value.(type) {
	case string:
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				p.warn(f.line, "%s must be a list of texts; ignored", f.key)
				return nil
			}
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	p.warn(f.line, "%s must be a list of texts; ignored", f.key)
	return nil
}

// integer reads a whole number, also when written as a quoted string.
func (p *parsing) integer(f *field) (int, bool) {
	switch v := f.value.(type) {
	case int64:
		return int(v), true
	case uint64:
		if v <= math.MaxInt32 {
			return int(v), true
		}
	case int:
		return v, true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) <= math.MaxInt32 {
			return int(v), true
		}
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			return n, true
		}
	}
	p.warn(f.line, "%s: %v is not a whole number; ignored", f.key, f.value)
	return 0, false
}

// count is a positive integer.
func (p *parsing) count(f *field) (int, bool) {
	n, ok := p.integer(f)
	if ok && n <= 0 {
		p.warn(f.line, "%s: %d must be positive; ignored", f.key, n)
		return 0, false
	}
	return n, ok
}

// boolean reads true/false, also quoted or as yes/no.
func (p *parsing) boolean(f *field) (bool, bool) {
	switch v := f.value.(type) {
	case bool:
		return v, true
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "yes", "on":
			return true, true
		case "false", "no", "off":
			return false, true
		}
	}
	p.warn(f.line, "%s: %v is not true or false; ignored", f.key, f.value)
	return false, false
}

// timeout reads a Go duration ("10m", "1h30m") or a number of seconds.
func (p *parsing) timeout(f *field) time.Duration {
	var d time.Duration
	ok := false
	switch v := f.value.(type) {
	case int64, uint64, float64:
		secs, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
		if secs > 0 && secs < math.MaxInt64/float64(time.Second) {
			d, ok = time.Duration(secs*float64(time.Second)), true
		}
	case string:
		s := strings.TrimSpace(v)
		if secs, err := strconv.ParseFloat(s, 64); err == nil {
			if secs > 0 && secs < math.MaxInt64/float64(time.Second) {
				d, ok = time.Duration(secs*float64(time.Second)), true
			}
		} else if pd, err := time.ParseDuration(s); err == nil && pd > 0 {
			d, ok = pd, true
		}
	}
	if !ok {
		p.warn(f.line, "timeout: %v is not a positive duration such as 10m or a number of seconds; ignored", f.value)
	}
	return d
}

// delegate reads true/false or the agent types it may dispatch, as a list or
// a comma string.
func (p *parsing) delegate(d *Definition, f *field) {
	if s, ok := f.value.(string); ok {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "yes", "false", "no":
			d.Delegate, _ = p.boolean(f)
			return
		}
	}
	if b, ok := f.value.(bool); ok {
		d.Delegate = b
		return
	}
	names, ok := toolEntries(f.value)
	if !ok {
		p.warn(f.line, "delegate: %v is neither true/false nor a list of agent types; ignored", f.value)
		return
	}
	if len(names) == 0 {
		return // an empty list delegates to no one
	}
	d.Delegate, d.DelegateAllow = true, names
}

// envNames reads the `env` allowlist: variable names, as a list or a comma
// string.
func (p *parsing) envNames(f *field) []string {
	names, ok := toolEntries(f.value)
	if !ok {
		p.warn(f.line, "env: want a list of environment variable names (env: [GH_TOKEN]); ignored")
		return nil
	}
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || strings.ContainsAny(n, "= \t") {
			p.warn(f.line, "env: %q is not an environment variable name; ignored", n)
			continue
		}
		out = append(out, n)
	}
	return out
}

// tools resolves tools and disallowedTools, which are read together because
// the read-only and unresolvable states depend on both.
func (p *parsing) tools(d *Definition, tools, disallowed *field) {
	if disallowed != nil {
		entries, ok := toolEntries(disallowed.value)
		if !ok && disallowed.value != nil {
			p.warn(disallowed.line, "disallowedTools must be a comma string or a list; ignored")
		}
		var drop []string
		for _, e := range entries {
			if _, known := lookupTool(strings.TrimSpace(strings.SplitN(e, "(", 2)[0])); !known {
				p.warn(disallowed.line, "disallowedTools: unknown tool %q, ignored", e)
				continue
			}
			drop = append(drop, e)
		}
		for _, ts := range resolveTools(drop, func(string) {}) {
			if ts.rule != "" {
				d.DenyRules = append(d.DenyRules, ts.rule)
			} else {
				d.DisallowedTools = append(d.DisallowedTools, ts.tool)
			}
		}
	}
	if tools == nil || tools.value == nil {
		return
	}
	if s, ok := tools.value.(string); ok {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "*", "all":
			return
		case "read-only", "readonly", "read_only":
			d.AllTools, d.Tools = false, ReadOnlyTools()
			d.ReadOnly = p.readOnly(d)
			return
		}
	}
	entries, ok := toolEntries(tools.value)
	if !ok {
		p.warn(tools.line, "tools must be a comma string or a list; all of the parent's tools are inherited")
		return
	}
	d.AllTools, d.Tools = false, []string{}
	specs := resolveTools(entries, func(msg string) { p.warn(tools.line, "tools: %s", msg) })
	d.Lacking = lackingTools(entries)
	for _, ts := range specs {
		if ts.rule != "" {
			d.ToolRules = append(d.ToolRules, ts.rule)
		}
		if !contains(d.Tools, ts.tool) && !contains(d.DisallowedTools, ts.tool) {
			d.Tools = append(d.Tools, ts.tool)
		}
	}
	if len(entries) > 0 && len(specs) == 0 {
		d.Unresolvable = true
		p.warn(tools.line, "none of the tools it names is one brood provides; it will be refused at spawn")
	}
	d.ReadOnly = p.readOnly(d)
}

// readOnly reports whether every tool d may use can never write, or the
// definition asks for a read-only sandbox.
func (p *parsing) readOnly(d *Definition) bool {
	if d.SandboxReadOnly {
		return true
	}
	if d.AllTools {
		return false
	}
	for _, t := range d.Tools {
		// An MCP tool listed by name is what the author asked for, and
		// whether it writes is known only from its server: the agent is
		// not read-only (unless sandbox: read-only says so, and then it
		// gets only the tools its servers mark readOnlyHint).
		if !isReadOnlyTool(t) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// indentedFence is the line of a frontmatter fence written with leading
// white space at the top of the file (which Claude Code's loader skips too),
// or 0.
func indentedFence(data []byte) int {
	for i, l := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if t == "---" && t != strings.TrimRight(l, "\r") {
			return i + 1
		}
		return 0
	}
	return 0
}

// delegationWithoutDelegate warns of a definition that names Task,
// TaskOutput, SendMessage or Workflow in tools without delegate: true:
// brood gives the delegation tools only to agents that may delegate.
func (p *parsing) delegationWithoutDelegate(d *Definition, fields []field) {
	for _, f := range fields {
		if f.key == "tools" {
			d.toolsLine = f.line
		}
	}
	if d.Delegate {
		return
	}
	warned := false
	for _, t := range d.Tools {
		switch t {
		case "Task", "TaskOutput", "SendMessage":
			if !warned {
				p.warn(d.toolsLine, "tools: %s is given only to agents with delegate: true; add delegate: true to let this agent dispatch subagents, or drop %s", t, t)
				warned = true
			}
		case "Workflow":
			p.warn(d.toolsLine, "tools: Workflow runs its plan's agents as this agent's subagents, so it is given only to agents with delegate: true; add delegate: true (and maxSubagentDepth = 2 or more in settings), or drop Workflow")
		}
	}
}

// DepthWarnings warns of the definitions that name Workflow in tools when
// the subagent depth cap leaves a subagent no room to dispatch: with
// maxSubagentDepth 1 every subagent is at the cap, so it gets neither Task
// nor Workflow.
func DepthWarnings(defs []*Definition, maxDepth int) []Diagnostic {
	if maxDepth > 1 {
		return nil
	}
	var out []Diagnostic
	for _, d := range defs {
		if d.Source == SourceBuiltin || !d.Delegate || !slices.Contains(d.Tools, "Workflow") {
			continue
		}
		out = append(out, Diagnostic{Path: d.Path, Line: d.toolsLine, Severity: SeverityWarning,
			Message: fmt.Sprintf("tools: Workflow can't run here: maxSubagentDepth is %d, so as a subagent %s is at the depth cap and gets no Workflow (nor Task); set maxSubagentDepth = 2 in .brood/settings.toml, or drop Workflow", maxDepth, d.Name)})
	}
	return out
}
