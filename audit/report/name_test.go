package report

import (
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	if got := Name("NodePool", "default"); got != "karpgate-nodepool-default" {
		t.Errorf("Name = %s", got)
	}
	long := strings.Repeat("a", 250)
	n1, n2 := Name("EC2NodeClass", long), Name("EC2NodeClass", long+"b")
	if len(n1) > 253 || len(n2) > 253 || n1 == n2 || !strings.HasPrefix(n1, "karpgate-ec2nodeclass-aaa") {
		t.Errorf("long names: %d %q, %d %q", len(n1), n1, len(n2), n2)
	}
}

// TestPartNamesNameNoOtherReport: an object's further reports are named
// like no report of another object, even one whose name looks like a
// part's.
func TestPartNamesNameNoOtherReport(t *testing.T) {
	type report struct {
		kind, name string
		part       int
	}
	long := strings.Repeat("a", 250)
	reports := []report{
		{"NodePool", "web", 1}, {"NodePool", "web", 2}, {"NodePool", "web", 12},
		{"NodePool", "2-web", 1}, {"NodePool", "2-web", 2}, {"NodePool", "web.2", 1}, {"NodePool", "2", 1},
		{"NodePool", "web-2", 1}, {"NodePool", "web-part-2", 1}, {"NodePool", "12-web", 1}, {"NodePool", "1", 2},
		{"NodeClaim", "web", 2}, {"EC2NodeClass", "web", 2},
		{"NodePool", long, 1}, {"NodePool", long, 2}, {"NodePool", "2-" + long, 1}, {"NodePool", long + "b", 2},
	}
	seen := map[string]report{}
	for _, r := range reports {
		n := PartName(r.kind, r.name, r.part)
		if other, dup := seen[n]; dup {
			t.Errorf("%+v and %+v are both named %s", r, other, n)
		}
		seen[n] = r
		if len(n) > maxNameLength || strings.Contains(n, "..") || strings.Contains(n, ".-") || strings.Contains(n, "-.") {
			t.Errorf("%+v: %q is no name the API server takes", r, n)
		}
	}
	if got := PartName("NodePool", "web", 2); got != "karpgate-nodepool.2-web" {
		t.Errorf("PartName(NodePool, web, 2) = %s", got)
	}
	if PartName("NodePool", "web", 1) != Name("NodePool", "web") {
		t.Error("the first part is not named Name")
	}
}
