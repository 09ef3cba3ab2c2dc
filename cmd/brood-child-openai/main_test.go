package main

import (
	"testing"

	"github.com/broodhq/brood/internal/childexe"
)

// TestNameIsChildexes: the name this binary says is the one its parent
// looks for beside brood.
func TestNameIsChildexes(t *testing.T) {
	if name != childexe.NameOpenAI {
		t.Errorf("name %q, childexe.NameOpenAI %q", name, childexe.NameOpenAI)
	}
}
