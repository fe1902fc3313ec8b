package junit

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"
)

func TestWriteCountsAndEscapes(t *testing.T) {
	var b bytes.Buffer
	err := Write(&b, Suites{Name: "x", Suites: []Suite{
		{Name: "a.yaml", Cases: []Case{
			{Name: "ok"},
			{Name: "denied", Failure: &Problem{Message: `1 <denial> & "quote"`, Text: "line"}},
			{Name: "skipped", Skipped: &Skipped{}},
		}},
		{Name: "b.yaml", Time: Seconds(1500 * time.Millisecond), Cases: []Case{{Name: "broken", Error: &Problem{Message: "boom"}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got Suites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("not valid XML: %v\n%s", err, b.String())
	}
	if got.Tests != 4 || got.Failures != 1 || got.Errors != 1 || got.Skipped != 1 {
		t.Fatalf("totals: %+v", got)
	}
	if s := got.Suites[0]; s.Tests != 3 || s.Failures != 1 || s.Skipped != 1 || s.Cases[1].Failure.Message != `1 <denial> & "quote"` {
		t.Fatalf("suite a: %+v", s)
	}
	if !strings.HasPrefix(b.String(), `<?xml version="1.0" encoding="UTF-8"?>`) || !strings.Contains(b.String(), `time="1.500"`) {
		t.Fatalf("header or time missing:\n%s", b.String())
	}
}
