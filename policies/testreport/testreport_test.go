package testreport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/policies/verify"
)

func TestSummariseAndText(t *testing.T) {
	results := []verify.Result{
		{Package: "p", Name: "test_a", Passed: true},
		{Package: "p", Name: "test_b", Error: "the test's body was false or undefined", File: "p_test.rego", Line: 7, Output: "x = 1\n"},
		{Package: "p", Name: "todo_test_c", Skipped: true},
	}
	if got, want := Summarise(results), (Summary{Total: 3, Passed: 1, Failed: 1, Skipped: 1}); got != want {
		t.Fatalf("got %+v want %+v", got, want)
	}
	var b bytes.Buffer
	if err := Write(&b, "text", results, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "FAIL p.test_b (p_test.rego:7)\n     the test's body was false or undefined\n     print: x = 1\nFAIL: 1 passed, 1 failed, 1 skipped (3 tests)\n"
	if b.String() != want {
		t.Fatalf("got %q\nwant %q", b.String(), want)
	}
	if err := Write(&b, "tap", results, Options{}); err == nil || !strings.Contains(err.Error(), "use one of text, json, junit") {
		t.Fatalf("unknown format: %v", err)
	}
}
