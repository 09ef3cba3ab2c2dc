package settings

import (
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Origin says where an effective value came from.
type Origin struct {
	Source string `json:"source"` // default | user | project | project-local | claude-user | claude-project | env | flag
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Env    string `json:"env,omitempty"`
	Flag   string `json:"flag,omitempty"`
}

func (o Origin) String() string {
	switch {
	case o.File != "" && o.Line > 0:
		return fmt.Sprintf("%s %s:%d", o.Source, o.File, o.Line)
	case o.File != "":
		return o.Source + " " + o.File
	case o.Env != "":
		return "env " + o.Env
	case o.Flag != "":
		return "flag --" + o.Flag
	}
	return o.Source
}

// Warning is a problem in a settings file that does not stop brood: an
// unknown key, a value out of the usual range.
type Warning struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Key  string `json:"key"`
	Msg  string `json:"message"`
}

func (w Warning) String() string {
	if w.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Msg)
	}
	return fmt.Sprintf("%s: %s", w.File, w.Msg)
}

// Keys lists every settings key in dotted form (pool.heartbeat_timeout),
// sorted, as `brood config list` shows them.
func Keys() []string {
	var keys []string
	walkKeys(reflect.TypeOf(Settings{}), "", func(k string, _ reflect.StructField) { keys = append(keys, k) })
	sort.Strings(keys)
	return keys
}

func walkKeys(t reflect.Type, prefix string, fn func(string, reflect.StructField)) {
	for i := range t.NumField() {
		fld := t.Field(i)
		name, _, _ := strings.Cut(fld.Tag.Get("toml"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		if fld.Type.Kind() == reflect.Struct && fld.Type != reflect.TypeOf(Duration{}) {
			walkKeys(fld.Type, key, fn)
			continue
		}
		fn(key, fld)
	}
}

// Value is the effective value of key in s, as TOML would spell it.
func (s Settings) Value(key string) (any, bool) {
	v := reflect.ValueOf(s)
	for _, part := range strings.Split(key, ".") {
		if v.Kind() != reflect.Struct {
			return nil, false
		}
		found := false
		t := v.Type()
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
			if name == part {
				v, found = v.Field(i), true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	switch x := v.Interface().(type) {
	case Duration:
		return x.Duration.String(), true
	case *bool:
		if x == nil {
			return true, true // the only *bool, agents.claude, defaults to on
		}
		return *x, true
	}
	return v.Interface(), true
}

// suggest names the known key a misplaced or misspelt one probably meant.
func suggest(key string) string {
	last := key[strings.LastIndex(key, ".")+1:]
	for _, k := range Keys() {
		if k != key && (k == last || strings.HasSuffix(k, "."+last)) {
			return k
		}
	}
	for _, k := range Keys() {
		if editDistance(last, k[strings.LastIndex(k, ".")+1:]) <= 2 {
			return k
		}
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

var (
	tableRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[+\s*([^\]]+?)\s*\]+`) })
	keyRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*("?)([A-Za-z0-9_\-.]+)("?)\s*=`) })
)

// keyLine is the line of data that sets key (dotted), or 0.
func keyLine(data, key string) int {
	table := ""
	for i, line := range strings.Split(data, "\n") {
		if m := tableRe().FindStringSubmatch(line); m != nil {
			table = strings.ReplaceAll(m[1], `"`, "")
			if table == key {
				return i + 1
			}
			continue
		}
		if m := keyRe().FindStringSubmatch(line); m != nil {
			full := m[2]
			if table != "" {
				full = table + "." + full
			}
			if full == key {
				return i + 1
			}
		}
	}
	return 0
}

// shortPath is path relative to base when inside it.
func shortPath(base, path string) string {
	if base == "" {
		return path
	}
	if rel, err := filepath.Rel(base, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}
