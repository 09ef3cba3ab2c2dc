package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/tool"
)

// LocalSettings is the project's own-answers file: gitignored, one person's
// "always allow" rules.
const LocalSettings = "settings.local.toml"

// askRequest is one permission question waiting for the user.
type askRequest struct {
	ctx   context.Context // ends when the asker no longer waits (it was stopped)
	ask   spawn.Ask
	reply chan spawn.Answer
}

// askRules are the rules the user allowed "always" in this session: asks
// they match are answered at once, and each is kept in
// .brood/settings.local.toml for later sessions.
type askRules struct {
	root      string
	workspace string
	write     configWriter                       // nil: straight to disk
	own       func(rel string, data []byte) bool // Config.OwnLocal
	mu        sync.Mutex
	rules     []string
	perms     *tool.Permissions
}

func newAskRules(root string, env *tool.Env) *askRules {
	ws := root
	if env != nil && env.Dir != "" {
		ws = env.Dir
	}
	return &askRules{root: root, workspace: ws}
}

// allows reports whether an "always" rule of this session covers the call.
func (r *askRules) allows(toolName, subject string) bool {
	r.mu.Lock()
	p := r.perms
	r.mu.Unlock()
	if p == nil || subject == "" {
		return false
	}
	// The subject goes under the tool's own field, the only one its
	// permission check reads (path for Grep, command for Bash...).
	key := tool.SubjectField(toolName)
	if key == "" {
		key = "file_path"
	}
	input, _ := json.Marshal(map[string]string{key: subject})
	return p.Check(toolName, input, r.workspace).Verdict == tool.Allow
}

// add keeps rules for the session and appends them to the local settings
// file. It returns the file's path and the writes, for the answer to carry
// down to the children (spawn.Answer.Wrote), and a note when later runs
// will not honour the file as the person's own.
func (r *askRules) add(rules []string) (string, []spawn.ConfigWrite, string, error) {
	if len(rules) == 0 {
		return "", nil, "", fmt.Errorf("no rule can allow this call for good (an ask rule or the shell form needs a prompt each time)")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	next := slices.Clone(r.rules)
	for _, rule := range rules {
		if !slices.Contains(next, rule) {
			next = append(next, rule)
		}
	}
	p, err := tool.NewPermissions("default", next, nil, nil)
	if err != nil {
		return "", nil, "", err
	}
	r.rules, r.perms = next, p
	return appendLocalRules(r.root, r.write, r.own, rules)
}

// configWriter writes one project configuration file from its old content
// (spawn.Dispatcher.WriteConfig: taken into the guards of the children
// working in place, so their guards do not undo the user's own answer).
type configWriter func(rel string, update func(old []byte, exists bool) ([]byte, error)) (spawn.ConfigWrite, error)

// writeConfigDirect is the configWriter without a dispatcher.
func writeConfigDirect(root string) configWriter {
	return func(rel string, update func([]byte, bool) ([]byte, error)) (spawn.ConfigWrite, error) {
		path := filepath.Join(root, filepath.FromSlash(rel))
		old, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return spawn.ConfigWrite{}, err
		}
		data, err := update(old, err == nil)
		if err != nil {
			return spawn.ConfigWrite{}, err
		}
		return spawn.ConfigWrite{Path: rel, Data: data, Perm: 0o644}, dispatch.WriteFileAtomic(path, data)
	}
}

// appendLocalRules adds rules to [permissions] allow in the project's
// .brood/settings.local.toml (created if missing, written tmp+rename, and
// kept out of git by .brood/.gitignore), and notes what it wrote in the
// user's ledger of brood's own local files (settings.RecordOwnLocal), so
// later runs honour it without trust — unless the file held content that
// nothing vouches for as the person's own (own: a file a repository
// shipped), which brood's writing must not launder: then the file stays
// gated, and the note says so.
func appendLocalRules(root string, write configWriter, own func(string, []byte) bool, rules []string) (string, []spawn.ConfigWrite, string, error) {
	if write == nil {
		write = writeConfigDirect(root)
	}
	if own == nil {
		own = func(rel string, data []byte) bool { return settings.OwnLocalRecorded(root, rel, data) }
	}
	const rel = ".brood/" + LocalSettings
	path := filepath.Join(root, ".brood", LocalSettings)
	if err := dispatch.EnsureStateDir(root); err != nil {
		return path, nil, "", err
	}
	vouched := false
	w, err := write(rel, func(old []byte, exists bool) ([]byte, error) {
		vouched = !exists || len(bytes.TrimSpace(old)) == 0 || own(rel, old)
		return mergeLocalRules(path, old, rules)
	})
	if err != nil {
		return path, nil, "", err
	}
	note := ""
	if !vouched {
		note = rel + " holds settings brood did not write: later runs hold it back until you run `brood trust`"
	} else if err := settings.RecordOwnLocal(root, rel, w.Data); err != nil {
		note = "later runs hold " + rel + " back until you run `brood trust`: " + err.Error()
	}
	wrote := []spawn.ConfigWrite{w}
	ign, err := write(".brood/.gitignore", func(old []byte, _ bool) ([]byte, error) { return ignoreLocal(old), nil })
	if err == nil {
		wrote = append(wrote, ign)
	}
	return path, wrote, note, err
}

// mergeLocalRules is the local settings file old with rules added to its
// [permissions] allow.
func mergeLocalRules(path string, old []byte, rules []string) ([]byte, error) {
	doc := map[string]any{}
	if _, err := toml.Decode(string(old), &doc); err != nil {
		return nil, fmt.Errorf("%s: %v; fix or remove it, the rule was not saved", path, err)
	}
	perms, _ := doc["permissions"].(map[string]any)
	if perms == nil {
		perms = map[string]any{}
	}
	var allow []string
	if list, ok := perms["allow"].([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok {
				allow = append(allow, s)
			}
		}
	}
	for _, rule := range rules {
		if !slices.Contains(allow, rule) {
			allow = append(allow, rule)
		}
	}
	perms["allow"] = allow
	doc["permissions"] = perms
	var b strings.Builder
	b.WriteString("# Your own answers to brood's permission prompts (\"always\"); not committed.\n")
	if err := toml.NewEncoder(&b).Encode(doc); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// ignoreLocal is .brood/.gitignore (old) keeping the local settings out of
// git.
func ignoreLocal(old []byte) []byte {
	for _, l := range strings.Split(string(old), "\n") {
		if strings.TrimSpace(l) == LocalSettings {
			return old
		}
	}
	s := string(old)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return []byte(s + LocalSettings + "\n")
}

// rootAsk is the root agent's own permission prompt (tool.Env.Ask).
func (e *engine) rootAsk(toolName, subject, reason string, rules []string) bool {
	a := e.ask(e.life, spawn.Ask{Agent: "root", Tool: toolName, Subject: subject, Reason: reason, Rules: rules})
	return a.Allow
}

// childAsk is a child's permission question, relayed by the dispatcher.
func (e *engine) childAsk(ctx context.Context, a spawn.Ask) spawn.Answer {
	return e.ask(ctx, a)
}

// ask answers from the session's "always" rules, or puts the question to
// the user and waits. Nothing answers for the user: without one (the UI is
// gone, the context ended) it is a denial.
func (e *engine) ask(ctx context.Context, a spawn.Ask) spawn.Answer {
	if e.perm.allows(a.Tool, a.Subject) {
		e.send(noticeMsg{text: fmt.Sprintf("allowed %s %s for %s (an \"always\" rule of this session)", a.Tool, firstLine(e.cfg.redactor()(a.Subject), 80), askWho(a))})
		return spawn.Answer{Allow: true}
	}
	req := askRequest{ctx: ctx, ask: a, reply: make(chan spawn.Answer, 1)}
	select {
	case e.msgs <- askMsg{req}:
	case <-e.done:
		return spawn.Answer{}
	case <-ctx.Done():
		return spawn.Answer{}
	}
	select {
	case ans := <-req.reply:
		return ans
	case <-e.done:
	case <-ctx.Done():
	}
	return spawn.Answer{}
}

func askWho(a spawn.Ask) string {
	if a.TaskID == "" {
		return a.Agent
	}
	return a.Agent + " " + shortID(a.TaskID)
}
