package fidelity

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// TestMain silences klog: apimachinery logs a stack trace for every node
// count past int32 (intstr.FromInt), which the cases ask about on purpose.
func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
