package script

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/broodhq/brood/internal/model"
)

// Data is what a template sees.
type Data struct {
	Agent  string   // the agent asking
	Turn   int      // this turn, from 1
	Prompt string   // the first user text of the conversation
	Last   string   // the latest user turn: its text and tool results
	System string   // the system prompt
	Tools  []string // the names of the tools offered
	// Results are the latest turn's tool results, in call order.
	Results []string
}

func newData(req *model.Request, turn int) *Data {
	d := &Data{Agent: req.Agent, Turn: turn, System: req.System, Last: lastUserText(req.Messages)}
	for _, t := range req.Tools {
		d.Tools = append(d.Tools, t.Name)
	}
	for _, m := range req.Messages {
		if m.Role == model.RoleUser {
			if t := m.Text(); t != "" {
				d.Prompt = t
				break
			}
		}
	}
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == model.RoleUser {
		for _, p := range req.Messages[n-1].Content {
			if p.Type == model.PartToolResult {
				d.Results = append(d.Results, p.Text)
			}
		}
	}
	return d
}

func lastUserText(msgs []model.Message) string {
	if n := len(msgs); n > 0 && msgs[n-1].Role == model.RoleUser {
		var b strings.Builder
		for _, p := range msgs[n-1].Content {
			b.WriteString(p.Text)
			b.WriteByte('\n')
		}
		return b.String()
	}
	return ""
}

// funcs are the script functions (docs/script-format.md) on d.
func funcs(d *Data) map[string]fn {
	return map[string]fn{
		// result i: the i-th tool result of the latest turn ("" if none).
		"result": typed1(func(i int) (any, error) {
			if i < 0 || i >= len(d.Results) {
				return "", nil
			}
			return d.Results[i], nil
		}),
		// lines a b s: lines a..b (1-based, inclusive) of s.
		"lines": func(args []any) (any, error) {
			if err := arity(args, 3); err != nil {
				return nil, err
			}
			a, err1 := asInt(args[0])
			b, err2 := asInt(args[1])
			s, err3 := asString(args[2])
			if err := errors.Join(err1, err2, err3); err != nil {
				return nil, err
			}
			ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
			a, b = max(a, 1), min(b, len(ls))
			if a > b {
				return "", nil
			}
			return strings.Join(ls[a-1:b], "\n"), nil
		},
		// first s: the first non-empty line of s.
		"first": typed1(func(s string) (any, error) {
			for _, l := range strings.Split(s, "\n") {
				if strings.TrimSpace(l) != "" {
					return strings.TrimSpace(l), nil
				}
			}
			return "", nil
		}),
		// count s: the number of non-empty lines of s.
		"count": typed1(func(s string) (any, error) {
			n := 0
			for _, l := range strings.Split(s, "\n") {
				if strings.TrimSpace(l) != "" {
					n++
				}
			}
			return n, nil
		}),
		// grep pattern s: the lines of s matching the regular expression.
		"grep": typed2(func(pat, s string) (any, error) {
			re, err := regexp.Compile(pat)
			if err != nil {
				return nil, err
			}
			var out []string
			for _, l := range strings.Split(s, "\n") {
				if re.MatchString(l) {
					out = append(out, l)
				}
			}
			return strings.Join(out, "\n"), nil
		}),
		// trunc n s: s cut to at most n bytes, with an ellipsis. It never
		// cuts a UTF-8 character in half.
		"trunc": typed2(func(n int, s string) (any, error) {
			if len(s) <= n {
				return s, nil
			}
			n = max(n, 0)
			for n > 0 && !utf8.RuneStart(s[n]) {
				n--
			}
			return s[:n] + "…", nil
		}),
		// match pattern s: the first capture group (or the whole match) of
		// the regular expression in s, "" if none; e.g. a task id.
		"match": typed2(func(pat, s string) (any, error) {
			re, err := regexp.Compile(pat)
			if err != nil {
				return nil, err
			}
			m := re.FindStringSubmatch(s)
			switch {
			case m == nil:
				return "", nil
			case len(m) > 1:
				return m[1], nil
			}
			return m[0], nil
		}),
		"join": typed2(func(l []string, sep string) (any, error) { return strings.Join(l, sep), nil }),
		"trim": typed1(func(s string) (any, error) { return strings.TrimSpace(s), nil }),
	}
}

func expand(s string, d *Data) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	return execute("say", s, d)
}

// expandValue expands templates in every string inside a decoded YAML value.
func expandValue(v any, d *Data) (any, error) {
	switch x := v.(type) {
	case string:
		return expand(x, d)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ev, err := expandValue(e, d)
			if err != nil {
				return nil, err
			}
			out[k] = ev
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			ev, err := expandValue(e, d)
			if err != nil {
				return nil, err
			}
			out[i] = ev
		}
		return out, nil
	case nil, bool, int, int64, uint64, float64:
		return x, nil
	default:
		return nil, fmt.Errorf("unsupported value %T in tool input", v)
	}
}
