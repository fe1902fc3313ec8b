package explain

import (
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	for _, tt := range []struct{ in, want, err string }{
		{"nodeclaim/default-x7k2p", "nodeclaim/default-x7k2p", ""},
		{"nodeclaims/a", "nodeclaim/a", ""},
		{"NodeClaim.karpenter.sh/a", "nodeclaim/a", ""},
		{"node/ip-10-0-1-2.ec2.internal", "node/ip-10-0-1-2.ec2.internal", ""},
		{"no/a", "node/a", ""},
		{"ip-10-0-1-2", "", "name a NodeClaim or a Node"},
		{"node/", "", "name a NodeClaim or a Node"},
		{"node/a/b", "", "name a NodeClaim or a Node"},
		{"pod/a", "", `"pod" is neither nodeclaim nor node`},
	} {
		got, err := ParseTarget(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseTarget(%q) error = %v, want %q", tt.in, err, tt.err)
		case tt.err == "" && (err != nil || got.String() != tt.want):
			t.Errorf("ParseTarget(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}
