package sandbox

import "testing"

func TestCapabilitiesLeaveNoWayOut(t *testing.T) {
	for _, b := range capabilities(nil).Builtins {
		if _, forbidden := forbiddenBuiltin(b.Name); forbidden {
			t.Errorf("capabilities still offer %s", b.Name)
		}
	}
	if caps := capabilities(nil); caps.AllowNet == nil || len(caps.AllowNet) != 0 {
		t.Errorf("AllowNet must be an empty list (no host), got %v", caps.AllowNet)
	}
}
