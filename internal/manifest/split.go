package manifest

import (
	"bufio"
	"bytes"
	"io"
)

// RawDocument is one YAML document exactly as it appeared in its stream.
type RawDocument struct {
	// Bytes holds the document including its leading "---" line, if any.
	Bytes []byte
	// StartLine is the 1-based line of the document's first byte in the stream.
	StartLine int
}

// DocumentScanner splits a YAML stream into documents without parsing it, so
// a stream of any length is read one document at a time.
type DocumentScanner struct {
	r       *bufio.Reader
	line    int
	pending []byte // a "---" line already read that starts the next document
	doc     RawDocument
	err     error
	done    bool
}

// NewDocumentScanner returns a scanner over r.
func NewDocumentScanner(r io.Reader) *DocumentScanner {
	return &DocumentScanner{r: bufio.NewReaderSize(r, 64*1024)}
}

// isDocumentStart reports whether line is a "---" marker at column 0. A
// marker may carry content after a space ("--- {a: 1}"); inside a block scalar
// a column-0 marker ends the document too, so no parser state is needed.
func isDocumentStart(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := line[3:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r'
}

// Scan advances to the next document. It returns false at the end of the
// stream or on a read error (see Err).
func (s *DocumentScanner) Scan() bool {
	if s.done {
		return false
	}
	var buf bytes.Buffer
	start := s.line + 1
	if s.pending != nil {
		buf.Write(s.pending)
		start = s.line // the pending line was already counted
		s.pending = nil
	}
	for {
		line, err := s.r.ReadBytes('\n')
		if len(line) > 0 {
			s.line++
			if isDocumentStart(line) && buf.Len() > 0 {
				s.pending = line
				s.doc = RawDocument{Bytes: buf.Bytes(), StartLine: start}
				return true
			}
			buf.Write(line)
		}
		if err == io.EOF {
			s.done = true
			if buf.Len() == 0 {
				return false
			}
			s.doc = RawDocument{Bytes: buf.Bytes(), StartLine: start}
			return true
		}
		if err != nil {
			s.err = err
			s.done = true
			return false
		}
	}
}

// Document returns the document found by the last successful Scan.
func (s *DocumentScanner) Document() RawDocument { return s.doc }

// Err returns the first read error, if any.
func (s *DocumentScanner) Err() error { return s.err }
