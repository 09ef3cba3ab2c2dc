package script

import (
	"strings"
	"testing"
	"text/template"
)

// TestExecuteAsTextTemplate: the script's executor (exec.go, which keeps
// text/template's execution out of brood) gives what text/template gives
// on the language a script uses, and fails where it fails.
func TestExecuteAsTextTemplate(t *testing.T) {
	d := &Data{Agent: "root", Turn: 2, Prompt: "find TODOs in w42", Last: "a\nb TODO\n",
		System: "sys", Tools: []string{"Read", "Task"}, Results: []string{"x.go\n\ny.go\n", "TODO one\nnone\nTODO two", "héllo"}}
	for _, src := range []string{
		`{{.Agent}} turn {{.Turn}}: {{.Prompt}}`, `{{join .Tools ", "}}`, `{{.Tools}}`, `{{.}}x`,
		`{{result 0}}|{{result 9}}|{{result -1}}`, `{{count (result 0)}} {{first (result 0)}}`,
		`{{lines 2 3 (result 1)}}|{{lines 0 99 (result 1)}}|{{lines 3 2 (result 1)}}`,
		`{{grep "TODO" (result 1)}}`, `{{trunc 2 (result 2)}}|{{trunc 0 "ab"}}|{{trunc 9 "ab"}}`,
		`{{match "w([0-9]+)" .Prompt}}|{{match "TODO" .Last}}|{{match "zz" .Last}}`, `{{trim "  a "}}`,
		`{{result 1 | grep "two"}}`, `{{result 1 | grep "TODO" | count}}`,
		`{{if .Results}}yes{{else}}no{{end}}`, `{{if eq .Turn 1}}one{{else if eq .Turn 2}}two{{end}}`,
		`{{with grep "TODO" (result 1)}}{{.}}{{else}}none{{end}}`, `{{with grep "zz" (result 1)}}{{.}}{{else}}none{{end}}`,
		`{{range .Tools}}[{{.}}]{{end}}`, `{{range $i, $t := .Tools}}{{$i}}={{$t}} {{end}}`,
		`{{range .Results}}{{if eq . "héllo"}}{{break}}{{end}}{{count .}};{{end}}`,
		`{{range .Tools}}{{if eq . "Read"}}{{continue}}{{end}}{{.}}{{end}}`, `{{range $x := .Tools}}{{$x}}{{$.Agent}}{{end}}`,
		`{{range .Results}}{{else}}empty{{end}}`, `{{$n := count (result 0)}}{{$n}} {{$n = 7}}{{$n}}`,
		`{{len .Tools}} {{len .Prompt}} {{index .Tools 1}} {{index .Results 2 1}}`,
		`{{printf "%s has %d" .Agent 3}} {{print "a" 1 "b"}} {{println .Turn}}`,
		`{{and .Agent .Prompt}} {{or "" .Agent}} {{and "" .Nope}} {{not .Tools}}`,
		`{{ne .Agent "x"}} {{lt 1 2}} {{le 2 2}} {{gt "b" "a"}} {{ge 1 2}} {{eq .Agent "a" "root"}}`,
		`{{- " trimmed " -}} x {{/* comment */}}`, `{{"\u00e9"}} {{1.5}} {{true}}`, `{{(result 0)}}`,
		`{{.Nope}}`, `{{.Agent.Nope}}`, `{{nosuch 1}}`, `{{grep "(" (result 0)}}`, `{{trunc "a" "b"}}`,
		`{{result}}`, `{{lines 1 (result 0)}}`, `{{lt 1 "a"}}`, `{{index .Tools 5}}`, `{{$x}}`,
		`{{if}}`, `{{end}}`, `{{define "x"}}a{{end}}`, `{{define "x"}}<{{.}}>{{end}}{{template "x" .Agent}}{{template "x"}}`,
		`{{block "b" .Turn}}[{{.}}]{{end}}`, `{{template "nope"}}`, `{{define "r"}}{{template "r"}}{{end}}{{template "r"}}`, `{{.Agent 1}}`, `{{"a" 1}}`, `{{nil}}`, `{{break}}`,
	} {
		var want strings.Builder
		tmpl, err := template.New("say").Funcs(template.FuncMap(textFuncs(d))).Option("missingkey=error").Parse(src)
		if err == nil {
			err = tmpl.Execute(&want, d)
		}
		got, gotErr := execute("say", src, d)
		switch {
		case (err != nil) != (gotErr != nil):
			t.Errorf("%s: error %v, text/template's %v", src, gotErr, err)
		case err == nil && got != want.String():
			t.Errorf("%s = %q, text/template's %q", src, got, want.String())
		}
	}
}

// textFuncs are funcs for text/template (the reference): each called on
// its arguments as the executor calls it.
func textFuncs(d *Data) map[string]any {
	f := funcs(d)
	call := func(name string, args ...any) (any, error) { return f[name](args) }
	return map[string]any{
		"result": func(i int) (any, error) { return call("result", i) },
		"lines":  func(a, b int, s string) (any, error) { return call("lines", a, b, s) },
		"first":  func(s string) (any, error) { return call("first", s) },
		"count":  func(s string) (any, error) { return call("count", s) },
		"grep":   func(p, s string) (any, error) { return call("grep", p, s) },
		"trunc":  func(n int, s string) (any, error) { return call("trunc", n, s) },
		"match":  func(p, s string) (any, error) { return call("match", p, s) },
		"join":   func(l []string, sep string) (any, error) { return call("join", l, sep) },
		"trim":   func(s string) (any, error) { return call("trim", s) },
	}
}
