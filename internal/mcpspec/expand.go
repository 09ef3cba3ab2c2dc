package mcpspec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

var envRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`) })

// Expand resolves ${VAR} and ${VAR:-default} in every string of the spec,
// as Claude Code does for .mcp.json. A variable that is unset and has no
// default is an error naming it.
func (s Spec) Expand(getenv func(string) string) (Spec, error) {
	var missing []string
	ex := func(v string) string {
		return envRef().ReplaceAllStringFunc(v, func(m string) string {
			g := envRef().FindStringSubmatch(m)
			if val := getenv(g[1]); val != "" {
				return val
			}
			if g[2] != "" {
				return g[3]
			}
			missing = append(missing, g[1])
			return ""
		})
	}
	out := Spec{Type: s.Type, Command: ex(s.Command), URL: ex(s.URL)}
	for _, a := range s.Args {
		out.Args = append(out.Args, ex(a))
	}
	if s.Env != nil {
		out.Env = map[string]string{}
		for k, v := range s.Env {
			out.Env[k] = ex(v)
		}
	}
	if s.Headers != nil {
		out.Headers = map[string]string{}
		for k, v := range s.Headers {
			out.Headers[k] = ex(v)
		}
	}
	if len(missing) > 0 {
		return Spec{}, fmt.Errorf("environment variable %s is not set (and has no ${%s:-default})", missing[0], missing[0])
	}
	return out, nil
}

// Refs are the environment variables the spec's ${VAR} references name,
// sorted: what a child must keep in its environment for the server.
func (s Spec) Refs() []string {
	var out []string
	add := func(v string) {
		for _, m := range envRef().FindAllStringSubmatch(v, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	add(s.Command)
	add(s.URL)
	for _, a := range s.Args {
		add(a)
	}
	for _, v := range s.Env {
		add(v)
	}
	for _, v := range s.Headers {
		add(v)
	}
	slices.Sort(out)
	return out
}

// Unexpand puts back, in text, the ${VAR} references of s for the values
// getenv gives them: an error that quotes the expanded spec (a connect
// error naming the URL with its ?key=, a command line) names
// ${MY_API_TOKEN}, never its value. Values shorter than four bytes are
// left (they say nothing and are everywhere).
func (s Spec) Unexpand(getenv func(string) string, text string) string {
	var pairs []string
	for _, name := range s.Refs() {
		if v := getenv(name); len(v) >= 4 {
			pairs = append(pairs, v, "${"+name+"}")
		}
	}
	if len(pairs) == 0 {
		return text
	}
	// Longest values first, so one that holds another is put back whole.
	type pair struct{ v, ref string }
	ps := make([]pair, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		ps = append(ps, pair{pairs[i], pairs[i+1]})
	}
	slices.SortFunc(ps, func(a, b pair) int { return len(b.v) - len(a.v) })
	pairs = pairs[:0]
	for _, p := range ps {
		pairs = append(pairs, p.v, p.ref)
	}
	return strings.NewReplacer(pairs...).Replace(text)
}
