package script

import (
	"errors"
	"fmt"
	"strings"
	"text/template/parse"
)

// A template is parsed by text/template/parse, as text/template parses it,
// and executed here, not by text/template: its execution reaches
// reflect.Value.MethodByName, which makes the linker keep every exported
// method of every type in brood (most of the model SDKs). The language is
// text/template's on the values a script sees (Data, strings, ints, bools
// and lists of strings): actions, pipelines, variables, if, with, range
// (break, continue), define, template and block, the functions of funcs
// and the built-ins of builtin.go.

// errBreak and errContinue unwind to the enclosing range.
var (
	errBreak    = errors.New("break outside range")
	errContinue = errors.New("continue outside range")
)

// state is one execution: the functions, the variables in scope and the
// output.
type state struct {
	fns   map[string]fn
	trees map[string]*parse.Tree // the named templates (define, block)
	vars  []variable
	out   *strings.Builder
	depth int // of template calls
}

type variable struct {
	name  string
	value any
}

// fn is a template function: its arguments evaluated.
type fn func(args []any) (any, error)

func execute(name, text string, d *Data) (string, error) {
	fns := funcs(d)
	names := map[string]any{}
	for k := range fns {
		names[k] = true
	}
	for _, k := range builtinNames() {
		names[k] = true
	}
	trees, err := parse.Parse(name, text, "", "", names)
	if err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	var b strings.Builder
	s := &state{fns: fns, trees: trees, vars: []variable{{"$", d}}, out: &b}
	if err := s.walk(d, trees[name].Root); err != nil {
		return "", fmt.Errorf("template: %s: %w", name, err)
	}
	return b.String(), nil
}

func (s *state) walk(dot any, n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			if err := s.walk(dot, c); err != nil {
				return err
			}
		}
		return nil
	case *parse.TextNode:
		s.out.Write(n.Text)
		return nil
	case *parse.CommentNode:
		return nil
	case *parse.ActionNode:
		v, err := s.pipe(dot, n.Pipe)
		if err != nil || len(n.Pipe.Decl) > 0 {
			return err
		}
		s.print(v)
		return nil
	case *parse.IfNode:
		return s.branch(dot, &n.BranchNode, false)
	case *parse.WithNode:
		return s.branch(dot, &n.BranchNode, true)
	case *parse.RangeNode:
		return s.rangeOver(dot, n)
	case *parse.TemplateNode:
		return s.template(dot, n)
	case *parse.BreakNode:
		return errBreak
	case *parse.ContinueNode:
		return errContinue
	}
	return fmt.Errorf("%s: not supported in a script", n)
}

// template runs a named template ({{template "x" pipeline}}) with its own
// variables ($ its dot).
func (s *state) template(dot any, n *parse.TemplateNode) error {
	t := s.trees[n.Name]
	if t == nil {
		return fmt.Errorf("no such template %q", n.Name)
	}
	if s.depth >= 1000 {
		return fmt.Errorf("exceeded maximum template depth (1000)")
	}
	if n.Pipe != nil {
		v, err := s.pipe(dot, n.Pipe)
		if err != nil {
			return err
		}
		dot = v
	} else {
		dot = nil
	}
	saved := s.vars
	s.vars, s.depth = []variable{{"$", dot}}, s.depth+1
	defer func() { s.vars, s.depth = saved, s.depth-1 }()
	return s.walk(dot, t.Root)
}

func (s *state) print(v any) {
	switch x := v.(type) {
	case nil:
		s.out.WriteString("<no value>")
	case *Data:
		fmt.Fprint(s.out, *x) // text/template prints what a pointer points to
	default:
		fmt.Fprint(s.out, v)
	}
}

// branch is if (dot unchanged) or with (dot the pipeline's value).
func (s *state) branch(dot any, n *parse.BranchNode, with bool) error {
	mark := len(s.vars)
	defer func() { s.vars = s.vars[:mark] }()
	v, err := s.pipe(dot, n.Pipe)
	if err != nil {
		return err
	}
	if truth(v) {
		if with {
			dot = v
		}
		return s.walk(dot, n.List)
	}
	if n.ElseList != nil {
		return s.walk(dot, n.ElseList)
	}
	return nil
}

func (s *state) rangeOver(dot any, n *parse.RangeNode) error {
	mark := len(s.vars)
	defer func() { s.vars = s.vars[:mark] }()
	v, err := s.pipe(dot, n.Pipe)
	if err != nil {
		return err
	}
	var items []any
	switch x := v.(type) {
	case []string:
		for _, e := range x {
			items = append(items, e)
		}
	case int:
		for i := range x {
			items = append(items, i)
		}
	case nil:
	default:
		return fmt.Errorf("range can't iterate over %v", v)
	}
	for i, e := range items {
		switch len(n.Pipe.Decl) {
		case 1:
			s.vars[len(s.vars)-1].value = e
		case 2:
			s.vars[len(s.vars)-2].value, s.vars[len(s.vars)-1].value = i, e
		}
		err := s.walk(e, n.List)
		if errors.Is(err, errBreak) {
			break
		}
		if err != nil && !errors.Is(err, errContinue) {
			return err
		}
	}
	if len(items) == 0 && n.ElseList != nil {
		return s.walk(dot, n.ElseList)
	}
	return nil
}

// pipe evaluates a pipeline: each command's value is the last argument of
// the next; its variables are declared (or assigned) in scope.
func (s *state) pipe(dot any, p *parse.PipeNode) (any, error) {
	var v any
	for i, c := range p.Cmds {
		var final []any
		if i > 0 {
			final = []any{v}
		}
		var err error
		if v, err = s.command(dot, c, final); err != nil {
			return nil, err
		}
	}
	for _, d := range p.Decl {
		if p.IsAssign {
			if err := s.assign(d.Ident[0], v); err != nil {
				return nil, err
			}
		} else {
			s.vars = append(s.vars, variable{d.Ident[0], v})
		}
	}
	return v, nil
}

func (s *state) assign(name string, v any) error {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			s.vars[i].value = v
			return nil
		}
	}
	return fmt.Errorf("undefined variable: %s", name)
}

func (s *state) variable(name string) (any, error) {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			return s.vars[i].value, nil
		}
	}
	return nil, fmt.Errorf("undefined variable: %s", name)
}

// command evaluates one command of a pipeline; final is the previous
// command's value, if any.
func (s *state) command(dot any, c *parse.CommandNode, final []any) (any, error) {
	first := c.Args[0]
	if id, ok := first.(*parse.IdentifierNode); ok {
		return s.call(dot, id.Ident, c.Args[1:], final)
	}
	if len(c.Args) > 1 || len(final) > 0 {
		if _, ok := first.(*parse.FieldNode); !ok {
			return nil, fmt.Errorf("can't give argument to non-function %s", first)
		}
		return nil, fmt.Errorf("%s is not a method but has arguments", first)
	}
	return s.arg(dot, first)
}

// arg evaluates an argument: a literal, dot, a field, a variable, a chain
// or a parenthesised pipeline.
func (s *state) arg(dot any, n parse.Node) (any, error) {
	switch n := n.(type) {
	case *parse.StringNode:
		return n.Text, nil
	case *parse.NumberNode:
		if n.IsInt {
			return int(n.Int64), nil
		}
		if n.IsFloat {
			return n.Float64, nil
		}
		return nil, fmt.Errorf("%s: not a number a script can use", n)
	case *parse.BoolNode:
		return n.True, nil
	case *parse.NilNode:
		return nil, errors.New("nil is not a command")
	case *parse.DotNode:
		return dot, nil
	case *parse.FieldNode:
		return fields(dot, n.Ident)
	case *parse.VariableNode:
		v, err := s.variable(n.Ident[0])
		if err != nil {
			return nil, err
		}
		return fields(v, n.Ident[1:])
	case *parse.ChainNode:
		v, err := s.arg(dot, n.Node)
		if err != nil {
			return nil, err
		}
		return fields(v, n.Field)
	case *parse.PipeNode:
		mark := len(s.vars)
		defer func() { s.vars = s.vars[:mark] }()
		return s.pipe(dot, n)
	case *parse.IdentifierNode:
		return s.call(dot, n.Ident, nil, nil)
	}
	return nil, fmt.Errorf("can't evaluate %s", n)
}

// fields is v's fields named by path (only Data has fields).
func fields(v any, path []string) (any, error) {
	for _, name := range path {
		d, ok := v.(*Data)
		if !ok {
			return nil, fmt.Errorf("can't evaluate field %s in type %T", name, v)
		}
		switch name {
		case "Agent":
			v = d.Agent
		case "Turn":
			v = d.Turn
		case "Prompt":
			v = d.Prompt
		case "Last":
			v = d.Last
		case "System":
			v = d.System
		case "Tools":
			v = d.Tools
		case "Results":
			v = d.Results
		default:
			return nil, fmt.Errorf("can't evaluate field %s in type *script.Data", name)
		}
	}
	return v, nil
}

// call calls the function name on args (evaluated here: and and or stop
// at the first that decides) and final.
func (s *state) call(dot any, name string, argNodes []parse.Node, final []any) (any, error) {
	if name == "and" || name == "or" {
		return s.andOr(dot, name == "and", argNodes, final)
	}
	args := make([]any, 0, len(argNodes)+len(final))
	for _, a := range argNodes {
		v, err := s.arg(dot, a)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	args = append(args, final...)
	f := s.fns[name]
	if f == nil {
		f = builtin(name)
	}
	if f == nil {
		return nil, fmt.Errorf("%q is not a defined function", name)
	}
	v, err := f(args)
	if err != nil {
		return nil, fmt.Errorf("error calling %s: %w", name, err)
	}
	return v, nil
}

func (s *state) andOr(dot any, and bool, argNodes []parse.Node, final []any) (any, error) {
	if len(argNodes)+len(final) == 0 {
		return nil, errors.New("wrong number of args: want at least 1 got 0")
	}
	var v any
	for _, a := range argNodes {
		var err error
		if v, err = s.arg(dot, a); err != nil {
			return nil, err
		}
		if truth(v) != and {
			return v, nil
		}
	}
	if len(final) > 0 {
		v = final[0]
	}
	return v, nil
}

// truth is text/template's: a value is true unless it is its type's zero
// value or empty.
func truth(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case int:
		return x != 0
	case float64:
		return x != 0
	case []string:
		return len(x) > 0
	}
	return true
}
