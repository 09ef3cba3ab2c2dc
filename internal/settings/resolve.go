package settings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/broodhq/brood/internal/trust"
)

// File is one settings file brood looks at, in precedence order (lowest
// first).
type File struct {
	Source string `json:"source"` // claude-user | user | claude-project | project | project-local
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// Claude is a Claude Code settings.json: only its permissions are read.
	Claude bool `json:"claude,omitempty"`
}

// Files lists the settings files of src, lowest precedence first:
// ~/.claude/settings.json, ~/.config/brood/settings.toml,
// .claude/settings.json, .claude/settings.local.json, .brood/settings.toml,
// .brood/settings.local.toml (DESIGN.md, "settings precedence").
func (src Sources) Files() []File {
	var fs []File
	add := func(source, path string, claude bool) {
		if !Loads(src.Only, !strings.HasSuffix(source, "user"), path) {
			return // --setting-sources leaves it out
		}
		_, err := os.Stat(path)
		fs = append(fs, File{Source: source, Path: path, Exists: err == nil, Claude: claude})
	}
	if src.Home != "" {
		add("claude-user", filepath.Join(src.Home, ".claude", "settings.json"), true)
		if src.UserFile == "" {
			add("user", filepath.Join(src.Home, ".config", "brood", "settings.toml"), false)
		}
	}
	if src.UserFile != "" {
		add("user", src.UserFile, false)
	}
	if src.ProjectRoot != "" {
		add("claude-project", filepath.Join(src.ProjectRoot, ".claude", "settings.json"), true)
		add("claude-project", filepath.Join(src.ProjectRoot, ".claude", "settings.local.json"), true)
		add("project", filepath.Join(src.ProjectRoot, ".brood", "settings.toml"), false)
		add("project-local", filepath.Join(src.ProjectRoot, ".brood", "settings.local.toml"), false)
	}
	return fs
}

// Resolved is the effective configuration with where each value came from.
type Resolved struct {
	Settings Settings
	Origins  map[string]Origin // by key (Keys); a key not there has its default
	Warnings []Warning
	Files    []File
	// Held are the project's values the trust gate held back, by key: the
	// effective value is the one below it (Origins), and this says what the
	// project asked for and why it is not used.
	Held map[string]Held
}

// Held is a project setting the trust gate set back to the layers below.
type Held struct {
	Value  any    `json:"value"`
	Origin Origin `json:"origin"`
	Why    string `json:"why"`
}

// Load resolves defaults < the files of Files < environment, and checks
// the result. Flags are applied by the caller on top. Unknown keys are
// warnings, not errors, so that a newer settings file still works with an
// older brood; a value that makes no sense is an error naming the key.
func Load(src Sources) (Settings, []string, error) {
	r, err := Resolve(src)
	if err != nil {
		return Defaults(), nil, err
	}
	var w []string
	for _, x := range r.Warnings {
		w = append(w, x.String())
	}
	return r.Settings, w, nil
}

// Resolve is Load with the origins and the warnings as values.
//
// The project gate (trust.go): the project's own files (.claude/settings.json,
// .brood/settings.toml, and a local file nothing but the repository vouches
// for) are honoured where they narrow; what they widen beyond the other
// layers only once the user trusts the project in its current state. The
// person's own local files (PersonalNeedsTrust: brood wrote them, or Claude
// Code trusts the folder) count as the user's.
func Resolve(src Sources) (*Resolved, error) {
	files := src.Files()
	gated, own, skip := gatedFiles(src, files)
	r, err := loadFiles(files, nil)
	if err != nil {
		return nil, err
	}
	base := r
	if len(skip) > 0 {
		if base, err = loadFiles(files, skip); err != nil {
			return nil, err
		}
	}
	t := src.Trust
	if !t.Inherited && src.Getenv != nil && strings.TrimSpace(src.Getenv(EnvTrustProject)) == "1" {
		t.Force = true
	}
	var keys []string
	full, fullOrigins := r.Settings, maps.Clone(r.Origins)
	r.Settings, r.Settings.Trust, keys = gate(src.ProjectRoot, base.Settings, r.Settings, gated, src.Gated, t)
	r.Settings.Trust.Own = own
	if r.Settings.Trust.Gated() {
		r.Settings.Trust.HeldAllow = heldAllow(r.Settings.Trust.Files, full.Permissions.Allow, r.Settings.Permissions.Allow)
		// What was held back has the value, and the origin, of the layers
		// below; what the project asked for is kept in Held.
		for _, k := range keys {
			if v, ok := full.Value(k); ok {
				if r.Held == nil {
					r.Held = map[string]Held{}
				}
				r.Held[k] = Held{Value: v, Origin: r.Origins[k], Why: heldWhy}
			}
			if o, ok := base.Origins[k]; ok {
				r.Origins[k] = o
			} else {
				delete(r.Origins, k)
			}
		}
	}
	if src.Getenv != nil {
		if err := applyEnv(&r.Settings, src.Getenv, r.Origins); err != nil {
			return nil, err
		}
	}
	if r.Settings.Trust.Gated() {
		if err := validateHeld(full, fullOrigins, src.Getenv); err != nil {
			return nil, err
		}
	}
	w, err := validate(r.Settings, r.Origins)
	if err != nil {
		return nil, err
	}
	r.Warnings = append(r.Warnings, w...)
	r.Settings.Permissions.AskFrom = askFrom(src, files, r.Settings.Permissions.Ask)
	return r, nil
}

// validateHeld checks the settings as the files say them, before the gate
// held anything back: a value that is no value (project_files.children =
// "bogus", a negative size, a mode that does not exist) is bad input, an
// error naming the key, its file and line, whether the project is trusted
// or not; the gate would otherwise take it for a loosening and hold it in
// silence. A valid loosening is held, with its notice, as before.
func validateHeld(full Settings, origins map[string]Origin, getenv func(string) string) error {
	full = full.clone()
	if getenv != nil {
		if err := applyEnv(&full, getenv, origins); err != nil {
			return err
		}
	}
	_, err := validate(full, origins)
	return err
}

// heldWhy is why a project value is held back.
const heldWhy = "held back: the project is not trusted, and this allows more than the layers below; trust it with `brood trust` (or --trust-project, " + EnvTrustProject + "=1, for one run)"

// gatedFiles are the project settings files that go through the gate (with
// their content, the grant's key) and their paths, and the local files
// that are the person's own (PersonalNeedsTrust), which do not.
func gatedFiles(src Sources, files []File) (gated, own []trust.File, skip map[string]bool) {
	skip = map[string]bool{}
	for _, f := range files {
		if !f.Exists || !strings.HasPrefix(f.Source, "claude-project") && f.Source != "project" && f.Source != "project-local" {
			continue
		}
		rel := filepath.ToSlash(strings.TrimPrefix(f.Path, src.ProjectRoot+string(filepath.Separator)))
		tf, ok, _ := ReadProjectFile(src.ProjectRoot, rel)
		if IsLocalFile(rel) && !PersonalNeedsTrust(context.Background(), src.ProjectRoot, rel, src.OwnLocal) {
			if ok {
				own = append(own, tf)
			}
			continue
		}
		if ok {
			gated = append(gated, tf)
			skip[f.Path] = true
		}
	}
	return gated, own, skip
}

// loadFiles applies defaults < files (less those in skip).
func loadFiles(files []File, skip map[string]bool) (*Resolved, error) {
	r := &Resolved{Settings: Defaults(), Origins: map[string]Origin{}, Files: files}
	for _, f := range files {
		if !f.Exists || skip[f.Path] {
			continue
		}
		var err error
		if f.Claude {
			err = r.loadClaude(f)
		} else {
			err = r.loadTOML(f)
		}
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

// loadTOML applies one brood settings file. Permission lists add to those
// of the files below (a deny anywhere wins); every other value replaces.
func (r *Resolved) loadTOML(f File) error {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	// The decode writes into the backing arrays of the lists (and the
	// maps) it finds: it gets copies, so the layers below keep their own
	// and a file's deny list adds to theirs instead of overwriting them.
	below := r.Settings.Permissions
	r.Settings = r.Settings.clone()
	md, err := toml.Decode(string(data), &r.Settings)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s:%d: %s (fix the file or move it aside)", f.Path, pe.Position.Line, pe.Message)
		}
		return fmt.Errorf("%s: %v (fix the file or move it aside)", f.Path, err)
	}
	if md.IsDefined("model") {
		r.Settings.modelClaude = false
	}
	if md.IsDefined("permissions", "mode") {
		r.Settings.modeClaude = false
	}
	p := &r.Settings.Permissions
	for _, l := range []struct {
		key       string
		dst, prev *[]string
	}{{"allow", &p.Allow, &below.Allow}, {"deny", &p.Deny, &below.Deny}, {"ask", &p.Ask, &below.Ask}} {
		if md.IsDefined("permissions", l.key) {
			*l.dst = addRules(*l.prev, *l.dst)
		}
	}
	known := Keys()
	undecoded := map[string]bool{}
	for _, k := range md.Undecoded() {
		if len(k) > 0 && (k[0] == "hooks" || k[0] == "prices") {
			continue // read by internal/hooks and internal/price
		}
		key := k.String()
		undecoded[key] = true
		msg := fmt.Sprintf("unknown setting %q ignored", key)
		if s := suggest(key); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		r.Warnings = append(r.Warnings, Warning{File: f.Path, Line: keyLine(string(data), key), Key: key, Msg: msg})
	}
	for _, k := range md.Keys() {
		key := k.String()
		if undecoded[key] {
			continue
		}
		if i := strings.Index(key, "pool.timeouts."); i == 0 {
			key = "pool.timeouts"
		}
		if slices.Contains(known, key) {
			r.Origins[key] = Origin{Source: f.Source, File: f.Path, Line: keyLine(string(data), k.String())}
		}
	}
	return nil
}

// addRules is below's permission rules followed by those of the layer
// above that below lacks, in a new list: a layer's rules add to the
// layers' below it (a deny anywhere wins), and neither list is changed.
func addRules(below, above []string) []string {
	out := slices.Clip(slices.Clone(below))
	for _, r := range above {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// claudeSettings is the part of a Claude Code settings.json brood reads.
type claudeSettings struct {
	Permissions struct {
		Allow                 []string `json:"allow"`
		Deny                  []string `json:"deny"`
		Ask                   []string `json:"ask"`
		DefaultMode           string   `json:"defaultMode"`
		AdditionalDirectories []string `json:"additionalDirectories"`
	} `json:"permissions"`
	Model string            `json:"model"`
	Env   map[string]string `json:"env"`
}

// loadClaude applies the permissions of a Claude Code settings.json. What
// a project's file allows (allow rules, defaultMode) is held back by the
// project gate until the user trusts the project (Resolve); its deny and ask
// rules always apply.
func (r *Resolved) loadClaude(f File) error {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	var c claudeSettings
	if err := json.Unmarshal(data, &c); err != nil {
		return JSONError(f.Path, data, err)
	}
	p, cp := &r.Settings.Permissions, c.Permissions
	line := func(k string) int { return jsonKeyLine(string(data), k) }
	p.Deny = addRules(p.Deny, cp.Deny)
	p.Ask = addRules(p.Ask, cp.Ask)
	for k, v := range map[string][]string{"permissions.deny": cp.Deny, "permissions.ask": cp.Ask} {
		if len(v) > 0 {
			r.Origins[k] = Origin{Source: f.Source, File: f.Path, Line: line(k[len("permissions."):])}
		}
	}
	p.Allow = addRules(p.Allow, cp.Allow)
	if len(cp.Allow) > 0 {
		r.Origins["permissions.allow"] = Origin{Source: f.Source, File: f.Path, Line: line("allow")}
	}
	switch cp.DefaultMode {
	case "manual": // Claude Code's other name for default
		cp.DefaultMode = "default"
	case "auto": // Claude Code's classifier mode: brood has no classifier
		r.Warnings = append(r.Warnings, Warning{File: f.Path, Line: line("defaultMode"), Key: "permissions.mode",
			Msg: `permissions.defaultMode: "auto" is a Claude Code mode brood does not implement; the mode of the layers below applies (write default, acceptEdits, plan or dontAsk)`})
		cp.DefaultMode = ""
	}
	if cp.DefaultMode != "" {
		p.Mode, r.Settings.modeClaude = cp.DefaultMode, true
		r.Origins["permissions.mode"] = Origin{Source: f.Source, File: f.Path, Line: line("defaultMode")}
	}
	if m := strings.TrimSpace(c.Model); m != "" {
		r.Settings.Model, r.Settings.modelClaude = ClaudeModel(m), true
		r.Origins["model"] = Origin{Source: f.Source, File: f.Path, Line: line("model")}
	}
	if len(c.Env) > 0 {
		// A new map: the one below may be another value's.
		env := maps.Clone(r.Settings.ClaudeEnv)
		if env == nil {
			env = map[string]string{}
		}
		maps.Copy(env, c.Env)
		r.Settings.ClaudeEnv = env
	}
	p.AdditionalDirectories = slices.Clone(p.AdditionalDirectories)
	for _, d := range cp.AdditionalDirectories {
		// Relative to the project the .claude directory is in, as Claude
		// Code's.
		if d = strings.TrimSpace(d); d != "" && !filepath.IsAbs(d) {
			d = filepath.Join(filepath.Dir(filepath.Dir(f.Path)), d)
		}
		if d != "" && !slices.Contains(p.AdditionalDirectories, filepath.Clean(d)) {
			p.AdditionalDirectories = append(p.AdditionalDirectories, filepath.Clean(d))
		}
	}
	return nil
}

// ClaudeModel is a Claude Code settings "model" as brood's provider/model:
// a Claude model id (claude-sonnet-4-5) is Anthropic's; an alias (sonnet,
// opus, haiku) and a spec brood already reads (openai/gpt-5, script:FILE)
// stay as they are. Claude Code's "[1m]" context suffix is dropped.
func ClaudeModel(m string) string {
	m = strings.TrimSuffix(m, "[1m]")
	if strings.HasPrefix(m, "claude-") {
		return "anthropic/" + m
	}
	return m
}

// jsonKeyLine is the line of data where "key" first appears as a key.
func jsonKeyLine(data, key string) int {
	for i, l := range strings.Split(data, "\n") {
		if strings.Contains(l, `"`+key+`"`) {
			return i + 1
		}
	}
	return 0
}
