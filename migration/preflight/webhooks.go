package preflight

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karpgate/karpgate/migration/snapshot"
)

// karpenterWebhookName matches the webhook configurations and webhooks
// Karpenter's Helm chart installed up to v0.37 (validation.webhook.karpenter.sh,
// defaulting.webhook.karpenter.k8s.aws, validation.webhook.config.karpenter.sh,
// validation.webhook.provisioners.karpenter.sh, ...). v1.0 installs none.
var karpenterWebhookName = regexp.MustCompile(`^(validation|defaulting)\.webhook\.([a-z0-9-]+\.)*karpenter\.(sh|k8s\.aws)$`)

// PF105: leftover webhook configurations of Karpenter v0.3x.
func checkWebhooks(sc *scope) []Finding {
	var out []Finding
	for _, w := range sc.s.Webhooks {
		hooks, _, _ := unstructured.NestedSlice(w.Content, "webhooks")
		var matched []string
		var notes []string
		failing := false
		for _, h := range hooks {
			m, _ := h.(map[string]any)
			name, _ := m["name"].(string)
			if !karpenterWebhookName.MatchString(name) && !karpenterWebhookName.MatchString(w.Name()) {
				continue
			}
			matched = append(matched, name)
			notes = append(notes, webhookTarget(sc, m))
			policy, _ := m["failurePolicy"].(string)
			failing = failing || policy != "Ignore"
		}
		if len(matched) == 0 {
			continue
		}
		resource := strings.ToLower(w.Kind())
		fix := Fix{Commands: []string{fmt.Sprintf("kubectl delete %s %s", resource, w.Name())}}
		if !sc.s.Live {
			fix = Fix{Edits: []string{"Delete this " + w.Kind() + " from your manifests, and from the cluster: " + fix.Commands[0]}}
		}
		severity := Deny
		effect := "every create or update these webhooks match fails (\"failed calling webhook " + matched[0] + "\"), Karpenter's own writes and karpgate migrate-storage's included."
		if !failing {
			severity = Warn
			effect = "every create or update these webhooks match waits for the webhook's timeout before it passes (failurePolicy Ignore)."
		}
		out = append(out, Finding{
			Severity: severity,
			Title:    fmt.Sprintf("%s %s is left over from Karpenter v0.3x", w.Kind(), w.Name()),
			Detail:   "Karpenter v1.0 and later serve no validating or defaulting webhook, so " + effect + " Helm leaves these configurations behind when the chart stops rendering them.",
			Objects:  []ObjectRef{ref(w, strings.Join(notes, "; "))},
			Fix:      fix,
		})
	}
	return out
}

// webhookTarget says where a webhook calls and whether that answers.
func webhookTarget(sc *scope, hook map[string]any) string {
	name, _ := hook["name"].(string)
	policy, _ := hook["failurePolicy"].(string)
	if policy == "" {
		policy = "Fail"
	}
	cfg, _, _ := unstructured.NestedMap(hook, "clientConfig")
	if u, ok := cfg["url"].(string); ok && u != "" {
		return fmt.Sprintf("%s calls %s (failurePolicy %s)", name, u, policy)
	}
	ns, _, _ := unstructured.NestedString(cfg, "service", "namespace")
	svcName, _, _ := unstructured.NestedString(cfg, "service", "name")
	svc := snapshot.Service{Namespace: ns, Name: svcName}
	state := ""
	if known, ok := sc.s.Services[svc.Key()]; ok && known.Known {
		switch {
		case !known.Exists:
			state = ", which does not exist"
		case known.ReadyEndpoints == 0:
			state = ", which has no ready endpoints"
		}
	}
	return fmt.Sprintf("%s calls service %s%s (failurePolicy %s)", name, svc.Key(), state, policy)
}
