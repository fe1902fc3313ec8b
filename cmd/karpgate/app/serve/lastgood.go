package serve

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/policies/lastgood"
	"github.com/karpgate/karpgate/policies/policywatch"
)

// withLastGood makes the watcher keep its last good files in the
// ConfigMap lastgood.Store writes, in the pod's namespace, start on them
// when the mounted files are broken, and say so with an Event on
// karpgate's ConfigMap.
func withLastGood(watch policywatch.Options, cfg *rest.Config, log logr.Logger) (policywatch.Options, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return watch, fmt.Errorf("a client for the last good policy: %w", err)
	}
	ns := PodNamespace()
	pod, _ := os.Hostname()
	watch.LastGood = lastgood.Store{Client: c, Namespace: ns, Name: deploy.LastGoodConfigMapName, Writer: pod}
	events := eventWriter{client: c, namespace: ns, pod: pod, log: log}
	watch.OnDegraded = func(refused error, saved time.Time) {
		events.write(corev1.EventTypeWarning, "LastGoodPolicyInUse", fmt.Sprintf(
			"karpgate.yaml or the policies do not compile, so %s serves the last good ones, saved at %s, until they are fixed: %v",
			pod, saved.UTC().Format(time.RFC3339), refused))
	}
	watch.OnRecovered = func() {
		events.write(corev1.EventTypeNormal, "PolicyRecovered", fmt.Sprintf("karpgate.yaml and the policies compile again; %s serves them", pod))
	}
	return watch, nil
}

// eventWriter records Events on karpgate's ConfigMap: the object a user
// edits to fix what the Event is about.
type eventWriter struct {
	client    client.Client
	namespace string
	pod       string
	log       logr.Logger
}

// maxEventMessage is what the API server keeps of an Event's message.
const maxEventMessage = 1024

func (e eventWriter) write(eventType, reason, message string) {
	if len(message) > maxEventMessage {
		message = message[:maxEventMessage-3] + "..."
	}
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: deploy.ConfigMapName + ".", Namespace: e.namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: "v1", Kind: "ConfigMap", Namespace: e.namespace, Name: deploy.ConfigMapName,
		},
		Reason: reason, Message: strings.ToValidUTF8(message, "?"), Type: eventType,
		Source:         corev1.EventSource{Component: deploy.Name, Host: e.pod},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
		ReportingController: "karpgate.io/serve", ReportingInstance: e.pod,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.client.Create(ctx, ev); err != nil {
		e.log.Error(err, "could not record an Event", "reason", reason)
	}
}
