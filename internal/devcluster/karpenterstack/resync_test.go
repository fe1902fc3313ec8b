package karpenterstack

import (
	"context"
	"reflect"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/karpgate/karpgate/internal/devcluster/controlplane"
)

// TestResyncTouchesOnlyPodsKwokLost: of the pods bound to nodes, only those
// on a simulated node, still Pending well after their binding, get the
// resync annotation; recent bindings, running pods, unbound pods and pods
// of other nodes are left alone.
func TestResyncTouchesOnlyPodsKwokLost(t *testing.T) {
	cp, err := controlplane.Start(controlplane.Options{}) // the binaries `make tools` built
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	c := kubernetes.NewForConfigOrDie(cp.Config)
	ctx := context.Background()
	now := time.Now()

	for name, annotations := range map[string]map[string]string{"simulated": {"kwok.x-k8s.io/node": "fake"}, "real": nil} {
		if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pods := []struct {
		name, node string
		boundAgo   time.Duration
		phase      corev1.PodPhase
	}{
		{"lost", "simulated", time.Minute, corev1.PodPending},
		{"just-bound", "simulated", 5 * time.Second, corev1.PodPending},
		{"running", "simulated", time.Minute, corev1.PodRunning},
		{"other-node", "real", time.Minute, corev1.PodPending},
		{"unbound", "", 0, corev1.PodPending},
	}
	for _, p := range pods {
		pod, err := c.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.name},
			Spec:       corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: "app", Image: "app"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = p.phase
		if p.node != "" {
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-p.boundAgo))}}
		}
		if _, err := c.CoreV1().Pods("default").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	touched, err := resyncOnce(ctx, c, now, podResyncAfter)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(touched)
	if want := []string{"default/lost"}; !reflect.DeepEqual(touched, want) {
		t.Errorf("touched %v, want %v", touched, want)
	}
	for _, p := range pods {
		got, err := c.CoreV1().Pods("default").Get(ctx, p.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, has := got.Annotations[ResyncAnnotation]; has != (p.name == "lost") {
			t.Errorf("pod %s: resync annotation %v", p.name, got.Annotations)
		}
	}
}
