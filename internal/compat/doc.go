// Package compat holds the Claude Code compatibility suite (issue 27): its
// tests run the real Claude Code (the pinned 2.1.332) and brood with the
// same flags against the same loopback model and compare what they print,
// field by field, with the allowlist of differences that docs/cli.md
// writes down. The package has no code of its own outside its tests.
package compat
