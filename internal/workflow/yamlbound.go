package workflow

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Bounds on a plan's text: a plan comes from a repository's file or from a
// model's Workflow call, and both may be hostile.
const (
	// maxPlanBytes is the largest plan text Parse reads.
	maxPlanBytes = 1 << 20
	// maxPlanExpanded is the most a plan's YAML may expand to with its
	// aliases followed, in bytes of its scalars plus 16 a node: a 700-byte
	// alias bomb (nine levels of nine aliases) expands to 387 million
	// nodes, and a 900 KB string aliased a hundred times to 90 MB, which
	// decoding would build in memory.
	maxPlanExpanded = 16 << 20
)

// yamlNodes weighs what data's YAML documents expand to, following
// aliases (16 a node, plus each scalar's bytes), and stops past limit. An anchor's size is counted once
// and reused by every alias naming it, so the walk is linear in the text.
func yamlNodes(data []byte, limit int) (int, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return 0, err
	}
	c := nodeCounter{anchors: map[string]int{}, limit: limit}
	n := 0
	for _, d := range f.Docs {
		n += c.count(d.Body)
		if n > limit {
			break
		}
	}
	return n, nil
}

type nodeCounter struct {
	anchors map[string]int
	limit   int
}

// count is the expanded size of n; it returns early (with a size past the
// limit) once the limit is passed.
func (c nodeCounter) count(n ast.Node) int {
	switch v := n.(type) {
	case nil:
		return 0
	case *ast.DocumentNode:
		return c.count(v.Body)
	case *ast.AnchorNode:
		size := c.count(v.Value)
		if v.Name != nil {
			c.anchors[v.Name.String()] = size
		}
		return size
	case *ast.AliasNode:
		if v.Value == nil {
			return 16
		}
		return c.sum(c.anchors[v.Value.String()], 16)
	case *ast.TagNode:
		return c.count(v.Value)
	case *ast.MappingKeyNode:
		return c.count(v.Value)
	case *ast.MappingValueNode:
		return c.sum(16, c.count(v.Key), c.count(v.Value))
	case *ast.MappingNode:
		values := make([]ast.Node, len(v.Values))
		for i, mv := range v.Values {
			values[i] = mv
		}
		return c.all(values)
	case *ast.SequenceNode:
		return c.all(v.Values)
	default:
		return c.sum(16, len(n.String()))
	}
}

// all is a container's weight: 16 and its values', stopping past the
// limit.
func (c nodeCounter) all(values []ast.Node) int {
	total := 16
	for _, n := range values {
		if total = c.sum(total, c.count(n)); total > c.limit {
			return total
		}
	}
	return total
}

// sum adds sizes, saturating just past the limit so that no sum overflows.
func (c nodeCounter) sum(xs ...int) int {
	t := 0
	for _, x := range xs {
		t += x
		if t > c.limit {
			return c.limit + 1
		}
	}
	return t
}

// checkPlanSize refuses a plan too large to read or whose YAML aliases
// expand past maxPlanNodes, before anything decodes it.
func checkPlanSize(name string, data []byte, yamlText bool) error {
	if len(data) > maxPlanBytes {
		return &Error{File: name, Line: 1, Message: fmt.Sprintf("is %d bytes; a plan may be at most %d (split it, or move long briefs into files the agents read)", len(data), maxPlanBytes)}
	}
	if !yamlText {
		return nil
	}
	n, err := yamlNodes(data, maxPlanExpanded)
	if err != nil {
		return nil // the decoder reports the syntax error with its line
	}
	if n > maxPlanExpanded {
		return &Error{File: name, Line: 1, Message: fmt.Sprintf("its YAML aliases expand to more than %d MiB (an alias bomb?); write the plan without nested aliases", maxPlanExpanded>>20)}
	}
	return nil
}
