package conversion

import (
	"fmt"
	"strings"
)

// A ConversionReview's answer has no room for a failure per object: the
// API server takes every converted object or none. So every object is
// tried, and the answer names each one that failed (the first
// maxListedFailures of them) and how many did, rather than stopping at the
// first: one message tells an operator every object to look at.
const maxListedFailures = 10

// objectFailures collects the objects of one review that failed.
type objectFailures struct {
	count  int
	listed []string
}

func (f *objectFailures) add(err error) {
	f.count++
	if len(f.listed) < maxListedFailures {
		f.listed = append(f.listed, err.Error())
	}
}

func (f *objectFailures) err(total int, desired string) error {
	switch {
	case f.count == 0:
		return nil
	case f.count == 1 && total == 1:
		return fmt.Errorf("%s", f.listed[0])
	}
	more := ""
	if f.count > len(f.listed) {
		more = fmt.Sprintf("; and %d more", f.count-len(f.listed))
	}
	return fmt.Errorf("%d of %d objects could not be converted to %s: %s%s", f.count, total, desired, strings.Join(f.listed, "; "), more)
}
