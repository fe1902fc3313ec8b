package karpenterstack

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// ResyncAnnotation is what resyncPods writes on a pod it brings back to
// kwok's attention: the time of the resync.
const ResyncAnnotation = "karpgate.io/kwok-resync"

// resyncPods plays a part of the kubelet that kwok lacks. kwok v0.8.0 skips
// a pod bound to a node whose lease it does not hold yet, and when it takes
// the lease it lists the node's pods once; a pod that list misses (the API
// server's watch cache lags on a busy machine) is never started. A kubelet
// syncs every pod of its node each minute, so no pod waits forever there.
// Every `every`, resyncPods touches the pods bound to a simulated node that
// are still Pending `after` their binding; the update event brings each to
// kwok again. It returns when ctx ends.
func resyncPods(ctx context.Context, c kubernetes.Interface, after, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = resyncOnce(ctx, c, time.Now(), after) // the next tick tries again
		}
	}
}

// resyncOnce touches the pods bound to a simulated node that have been
// Pending for longer than after at now, and returns them as namespace/name.
func resyncOnce(ctx context.Context, c kubernetes.Interface, now time.Time, after time.Duration) ([]string, error) {
	pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("status.phase", string(corev1.PodPending)).String()})
	if err != nil {
		return nil, err
	}
	simulated := map[string]bool{}
	var touched []string
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || now.Sub(boundAt(&p)) < after {
			continue
		}
		isSimulated, seen := simulated[p.Spec.NodeName]
		if !seen {
			node, err := c.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
			isSimulated = err == nil && isKwokNode(node)
			simulated[p.Spec.NodeName] = isSimulated
		}
		if !isSimulated {
			continue
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, ResyncAnnotation, now.UTC().Format(time.RFC3339Nano))
		if _, err := c.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			continue // gone or changed meanwhile: the next pass sees it again
		}
		touched = append(touched, p.Namespace+"/"+p.Name)
	}
	return touched, nil
}

// boundAt is when the scheduler bound the pod, or its creation when the
// condition is missing.
func boundAt(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return p.CreationTimestamp.Time
}

// isKwokNode says whether kwok manages the node (--manage-nodes-with-annotation-selector).
func isKwokNode(n *corev1.Node) bool {
	key, value, _ := strings.Cut(kwokNodeAnnotation, "=")
	return n.Annotations[key] == value
}
