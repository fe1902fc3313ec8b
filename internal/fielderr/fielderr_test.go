package fielderr

import (
	"errors"
	"fmt"
	"testing"
)

func TestError(t *testing.T) {
	tests := []struct {
		err  FieldError
		want string
	}{
		{FieldError{Path: "spec.a", Problem: "is wrong"}, "spec.a: is wrong"},
		{FieldError{Problem: "no path"}, "no path"},
		{FieldError{Path: "spec.a", Problem: "is wrong", Fix: "remove it"}, "spec.a: is wrong; remove it"},
		{FieldError{Path: "spec.s", Value: "0 9 * * sat-sun", Problem: "bad cron", Replacement: "0 9 * * sat,sun"}, `spec.s: bad cron; use "0 9 * * sat,sun"`},
		// A fix phrase wins over a replacement: it says more.
		{FieldError{Path: "spec.a", Problem: "p", Fix: "f", Replacement: "r"}, "spec.a: p; f"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestErrorIsFoundInAChain(t *testing.T) {
	wrapped := fmt.Errorf("NodePool/a: %w", &FieldError{Path: "spec.x", Problem: "p"})
	var fe *FieldError
	if !errors.As(wrapped, &fe) || fe.Path != "spec.x" {
		t.Fatalf("errors.As found %v", fe)
	}
}

func TestQuotedReplacement(t *testing.T) {
	if got := (&FieldError{Replacement: `say "hi"`}).QuotedReplacement(); got != `"say \"hi\""` {
		t.Errorf("got %s", got)
	}
	if got := (&FieldError{}).QuotedReplacement(); got != "" {
		t.Errorf("no replacement quoted as %q", got)
	}
}
