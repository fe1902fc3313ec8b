package jsonerror

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type review struct {
	Kind    string `json:"kind"`
	Request *struct {
		UID     string          `json:"uid"`
		Objects []int           `json:"objects"`
		Raw     []byte          `json:"raw"`
		Dry     *bool           `json:"dryRun"`
		Extra   json.RawMessage `json:"extra"`
	} `json:"request"`
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		body, want string
		ok         bool
	}{
		{`{"kind":`, "the JSON ends early (unexpected end of JSON input)", true},
		{`kind: Review`, "invalid JSON at byte 1 (invalid character 'k' looking for beginning of value)", true},
		{`[1]`, "the body is a JSON array where an object belongs", true},
		{`{"kind":1}`, "kind is a JSON number where a string belongs", true},
		{`{"request":"x"}`, "request is a JSON string where an object belongs", true},
		{`{"request":{"uid":true}}`, "request.uid is a JSON bool where a string belongs", true},
		{`{"request":{"objects":{}}}`, "request.objects is a JSON object where a list belongs", true},
		{`{"request":{"raw":7}}`, "request.raw is a JSON number where a base64 string belongs", true},
		{`{"request":{"dryRun":"yes"}}`, "request.dryRun is a JSON string where true or false belongs", true},
	}
	for _, tt := range tests {
		var v review
		err := json.Unmarshal([]byte(tt.body), &v)
		if err == nil {
			t.Fatalf("%s decoded", tt.body)
		}
		got, ok := Describe(err)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: got %q %v, want %q", tt.body, got, ok, tt.want)
		}
		if strings.Contains(got, "Go ") || strings.Contains(got, "jsonerror.") {
			t.Errorf("%s: %q names Go types", tt.body, got)
		}
	}
	if got, ok := Describe(errors.New("quantities must match the regular expression")); ok || got != "" {
		t.Errorf("an unknown error was described: %q", got)
	}
}
