package script

import (
	"errors"
	"fmt"
)

// builtinNames are text/template's built-in functions a script can use.
func builtinNames() []string {
	return []string{"and", "or", "not", "len", "index", "print", "printf", "println", "eq", "ne", "lt", "le", "gt", "ge"}
}

// builtin is text/template's built-in function name (but and and or, which
// the executor evaluates itself), on the values a script sees.
func builtin(name string) fn {
	switch name {
	case "not":
		return func(a []any) (any, error) {
			if err := arity(a, 1); err != nil {
				return nil, err
			}
			return !truth(a[0]), nil
		}
	case "len":
		return func(a []any) (any, error) {
			if err := arity(a, 1); err != nil {
				return nil, err
			}
			switch x := a[0].(type) {
			case string:
				return len(x), nil
			case []string:
				return len(x), nil
			}
			return nil, fmt.Errorf("len of type %T", a[0])
		}
	case "index":
		return index
	case "print":
		return func(a []any) (any, error) { return fmt.Sprint(a...), nil }
	case "println":
		return func(a []any) (any, error) { return fmt.Sprintln(a...), nil }
	case "printf":
		return func(a []any) (any, error) {
			if len(a) == 0 {
				return nil, fmt.Errorf("wrong number of args: want at least 1 got 0")
			}
			f, err := asString(a[0])
			if err != nil {
				return nil, err
			}
			return fmt.Sprintf(f, a[1:]...), nil
		}
	case "eq", "ne", "lt", "le", "gt", "ge":
		return compare(name)
	}
	return nil
}

func index(a []any) (any, error) {
	if len(a) == 0 {
		return nil, fmt.Errorf("wrong number of args: want at least 1 got 0")
	}
	v := a[0]
	for _, ix := range a[1:] {
		i, err := asInt(ix)
		if err != nil {
			return nil, err
		}
		switch x := v.(type) {
		case []string:
			if i < 0 || i >= len(x) {
				return nil, fmt.Errorf("index out of range: %d", i)
			}
			v = x[i]
		case string:
			if i < 0 || i >= len(x) {
				return nil, fmt.Errorf("index out of range: %d", i)
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("can't index item of type %T", v)
		}
	}
	return v, nil
}

// compare is eq, ne, lt, le, gt or ge on two ints, strings or bools (eq:
// the first against any of the others).
func compare(op string) fn {
	return func(a []any) (any, error) {
		if len(a) < 2 || (op != "eq" && len(a) != 2) {
			return nil, fmt.Errorf("wrong number of args for %s: want 2 got %d", op, len(a))
		}
		for _, b := range a[1:] {
			c, err := order(a[0], b, op == "eq" || op == "ne")
			if err != nil {
				return nil, err
			}
			var r bool
			switch op {
			case "eq":
				if c == 0 {
					return true, nil
				}
				continue
			case "ne":
				r = c != 0
			case "lt":
				r = c < 0
			case "le":
				r = c <= 0
			case "gt":
				r = c > 0
			case "ge":
				r = c >= 0
			}
			return r, nil
		}
		return false, nil
	}
}

// order is -1, 0 or 1 as x is less than, equal to or greater than y (of
// one basic type; bools only for equality).
func order(x, y any, eqOnly bool) (int, error) {
	switch a := x.(type) {
	case int:
		if b, ok := y.(int); ok {
			return cmp3(a < b, a > b), nil
		}
	case string:
		if b, ok := y.(string); ok {
			return cmp3(a < b, a > b), nil
		}
	case float64:
		if b, ok := y.(float64); ok {
			return cmp3(a < b, a > b), nil
		}
	case bool:
		if b, ok := y.(bool); ok && eqOnly {
			return cmp3(false, a != b), nil
		}
	}
	return 0, fmt.Errorf("incompatible types for comparison: %T and %T", x, y)
}

func cmp3(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}

func arity(a []any, n int) error {
	if len(a) != n {
		return fmt.Errorf("wrong number of args: want %d got %d", n, len(a))
	}
	return nil
}

func asInt(v any) (int, error) {
	if i, ok := v.(int); ok {
		return i, nil
	}
	return 0, fmt.Errorf("wrong type for value; expected int; got %T", v)
}

func asString(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", fmt.Errorf("wrong type for value; expected string; got %T", v)
}

func asValue[T any](v any) (T, error) {
	t, ok := v.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("wrong type for value; expected %T; got %T", zero, v)
	}
	return t, nil
}

// typed1 and typed2 are f on its arguments checked for their types.
func typed1[A any](f func(A) (any, error)) fn {
	return func(a []any) (any, error) {
		if err := arity(a, 1); err != nil {
			return nil, err
		}
		x, err := asValue[A](a[0])
		if err != nil {
			return nil, err
		}
		return f(x)
	}
}

func typed2[A, B any](f func(A, B) (any, error)) fn {
	return func(a []any) (any, error) {
		if err := arity(a, 2); err != nil {
			return nil, err
		}
		x, err1 := asValue[A](a[0])
		y, err2 := asValue[B](a[1])
		if err1 != nil || err2 != nil {
			return nil, errors.Join(err1, err2)
		}
		return f(x, y)
	}
}
