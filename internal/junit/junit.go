package junit

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Suites is the document root.
type Suites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []Suite  `xml:"testsuite"`
}

// Suite groups the cases of one file or package.
type Suite struct {
	Name     string  `xml:"name,attr"`
	Tests    int     `xml:"tests,attr"`
	Failures int     `xml:"failures,attr"`
	Errors   int     `xml:"errors,attr"`
	Skipped  int     `xml:"skipped,attr"`
	Time     Seconds `xml:"time,attr"`
	Cases    []Case  `xml:"testcase"`
}

// Case is one test: one object in lint, one test_ rule in verify.
type Case struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      Seconds  `xml:"time,attr"`
	Failure   *Problem `xml:"failure,omitempty"`
	Error     *Problem `xml:"error,omitempty"`
	Skipped   *Skipped `xml:"skipped,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Problem is a failure or an error.
type Problem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// Skipped marks a skipped case.
type Skipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// Seconds is a duration written as seconds with millisecond precision.
type Seconds time.Duration

// MarshalXMLAttr writes the duration in seconds.
func (s Seconds) MarshalXMLAttr(name xml.Name) (xml.Attr, error) {
	return xml.Attr{Name: name, Value: fmt.Sprintf("%.3f", time.Duration(s).Seconds())}, nil
}

// Write counts the cases of every suite and writes the document.
func Write(w io.Writer, s Suites) error {
	s.Tests, s.Failures, s.Errors, s.Skipped = 0, 0, 0, 0
	for i := range s.Suites {
		suite := &s.Suites[i]
		suite.Tests, suite.Failures, suite.Errors, suite.Skipped = len(suite.Cases), 0, 0, 0
		for _, c := range suite.Cases {
			switch {
			case c.Failure != nil:
				suite.Failures++
			case c.Error != nil:
				suite.Errors++
			case c.Skipped != nil:
				suite.Skipped++
			}
		}
		s.Tests += suite.Tests
		s.Failures += suite.Failures
		s.Errors += suite.Errors
		s.Skipped += suite.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// UnmarshalXMLAttr reads seconds back, so reports round-trip.
func (s *Seconds) UnmarshalXMLAttr(attr xml.Attr) error {
	f, err := strconv.ParseFloat(attr.Value, 64)
	if err != nil {
		return fmt.Errorf("time %q: %w", attr.Value, err)
	}
	*s = Seconds(time.Duration(f * float64(time.Second)))
	return nil
}
