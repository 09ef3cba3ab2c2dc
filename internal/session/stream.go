package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"iter"
)

// Line is one line of a transcript as Stream reads it: its number (from
// 1) and either its record, or why it has none.
type Line struct {
	N int
	// Record is the line's record when neither Over nor Bad.
	Record Record
	// Size is the line's length in bytes.
	Size int64
	// Over: the line is longer than Stream's cap; it was skipped unread.
	Over bool
	// Bad: the line is no record (torn by a crash, or garbled).
	Bad bool
}

// Stream yields a transcript's lines one at a time, holding at most max
// bytes of one line (a longer one is yielded as Over, read past without
// being kept): a transcript of any size is read in bounded memory. Blank
// lines are not yielded. The error, at the end, is a read's.
func Stream(rd io.Reader, max int) (iter.Seq[Line], func() error) {
	var err error
	seq := func(yield func(Line) bool) {
		br := bufio.NewReaderSize(rd, 64<<10)
		for n := 1; ; n++ {
			buf, size, over, rerr := readLine(br, max)
			if l, ok := parseLine(n, buf, size, over); ok && !yield(l) {
				return
			}
			if rerr != nil {
				if !errors.Is(rerr, io.EOF) {
					err = rerr
				}
				return
			}
		}
	}
	return seq, func() error { return err }
}

// parseLine makes line n's Line; ok is false for a blank line.
func parseLine(n int, buf []byte, size int64, over bool) (Line, bool) {
	l := Line{N: n, Size: size, Over: over}
	if over {
		return l, true
	}
	line := bytes.TrimSpace(buf)
	if len(line) == 0 {
		return l, false
	}
	if json.Unmarshal(line, &l.Record) != nil || l.Record.Type == "" {
		l.Bad = true
	}
	return l, true
}

// readLine reads one line (without its newline) from br, keeping at most
// max bytes of it: over says it was longer, and size is its whole length.
func readLine(br *bufio.Reader, max int) (buf []byte, size int64, over bool, err error) {
	for {
		frag, e := br.ReadSlice('\n')
		frag = bytes.TrimSuffix(frag, []byte("\n"))
		size += int64(len(frag))
		if !over {
			if len(buf)+len(frag) > max {
				over, buf = true, nil
			} else {
				buf = append(buf, frag...)
			}
		}
		if e == nil {
			return buf, size, over, nil
		}
		if !errors.Is(e, bufio.ErrBufferFull) {
			return buf, size, over, e
		}
	}
}
