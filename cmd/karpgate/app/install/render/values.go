package render

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/cmd/karpgate/app/install"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// entry is one key of values.yaml with the comment that explains it.
type entry struct {
	key     string
	value   any // a plain value, or *yaml.Node for a nested mapping
	comment string
}

func mapping(entries ...entry) (*yaml.Node, error) {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, e := range entries {
		v, ok := e.value.(*yaml.Node)
		if !ok {
			v = &yaml.Node{}
			if err := v.Encode(e.value); err != nil {
				return nil, fmt.Errorf("values %s: %w", e.key, err)
			}
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: e.key, HeadComment: e.comment}, v)
	}
	return m, nil
}

// valuesFile writes values.yaml from opts, each value with its reason.
func valuesFile(opts install.Options) ([]byte, error) {
	repo, tag, ok := strings.Cut(opts.Image, ":")
	if !ok {
		return nil, fmt.Errorf("image %q has no tag; write repository:tag", opts.Image)
	}
	resources, err := toContent(&opts.Resources)
	if err != nil {
		return nil, err
	}
	affinity, err := toContent(opts.Affinity)
	if err != nil {
		return nil, err
	}
	image, err := mapping(entry{key: "repository", value: repo}, entry{key: "tag", value: tag}, entry{key: "pullPolicy", value: string(opts.ImagePullPolicy)})
	if err != nil {
		return nil, err
	}
	policy := func(p install.WebhookPolicy, why string) (*yaml.Node, error) {
		return mapping(
			entry{key: "failurePolicy", value: string(p.FailurePolicy), comment: why},
			entry{key: "timeoutSeconds", value: p.TimeoutSeconds, comment: fmt.Sprintf("1 to 30. karpgate answers within four fifths of the shorter of the two webhooks'\ntimeouts (--request-timeout; %s for %ds), before the API server gives up.", deploy.RequestTimeout, deploy.WebhookTimeoutSeconds)},
		)
	}
	validating, err := policy(opts.Validating, "Fail: a policy gate that fails open is not a gate. While karpgate is down, NodePool\nand EC2NodeClass creates and updates are refused; to lift the gate in an emergency:\n  kubectl delete validatingwebhookconfiguration "+deploy.WebhookConfigurationName)
	if err != nil {
		return nil, err
	}
	mutating, err := policy(opts.Mutating, "Ignore: mutations are conveniences; while karpgate is down objects are stored unmutated.")
	if err != nil {
		return nil, err
	}
	webhooks, err := mapping(entry{key: "validating", value: validating}, entry{key: "mutating", value: mutating})
	if err != nil {
		return nil, err
	}
	controller, err := mapping(entry{key: "enabled", value: opts.Controller},
		entry{key: "rolloutGuard", value: opts.RolloutGuard, comment: "Hold a drift rollout whose new nodes do not become Ready, by adding a budget\n{nodes: \"0\", reasons: [Drifted]} to the NodePool; karpgate resume NODEPOOL lifts it."},
		entry{key: "rolloutGuardFreezeAfter", value: opts.RolloutGuardFreezeAfter, comment: "When the rollout guard holds this many NodePools at once, freeze drift in every\nNodePool (as karpgate freeze --all does); karpgate resume --all lifts it. 0: never."})
	if err != nil {
		return nil, err
	}
	certManager, err := mapping(entry{key: "enabled", value: opts.CertManager})
	if err != nil {
		return nil, err
	}
	networkPolicy, err := mapping(entry{key: "enabled", value: opts.NetworkPolicy.Enabled},
		entry{key: "apiServerCIDRs", value: opts.NetworkPolicy.APIServerCIDRs, comment: "Addresses that may reach the webhook port: only the API server calls it. The\ndefault admits any address because the chart cannot know the API server's;\nnarrow it to your control plane's (EKS: the VPC subnets of the control plane's\nnetwork interfaces; kubeadm: the control-plane nodes)."})
	if err != nil {
		return nil, err
	}
	root, err := mapping(
		entry{key: "replicas", value: opts.Replicas, comment: "Pods serving the webhooks. Keep 2 or more: once Karpenter's CRDs convert through\nkarpgate, a karpgate outage is a Karpenter outage. With 2 or more a\nPodDisruptionBudget (minAvailable 1) keeps one through node drains."},
		entry{key: "image", value: image},
		entry{key: "resources", value: resources, comment: "Requests and limits of the karpgate container. karpgate sets GOMEMLIMIT to 85% of\nlimits.memory and shares what that leaves after its own needs among the requests\nin flight; below 377Mi it refuses to start, because one 32 MiB conversion review\nmust fit."},
		entry{key: "affinity", value: affinity, comment: "The default keeps karpgate off nodes Karpenter launched (label " + karpenter.NodePoolLabel + "):\nkarpgate must keep running while Karpenter is down, and must not be disrupted by\nthe NodePools it guards."},
		entry{key: "webhooks", value: webhooks},
		entry{key: "environment", value: opts.Environment, comment: "When set, passed as --environment: the environment of every object karpgate\nchecks (\"production\", for example), winning over karpgate.yaml and object labels."},
		entry{key: "controller", value: controller, comment: "The drift/disruption loop (karpgate serve --controller)."},
		entry{key: "certManager", value: certManager, comment: "cert-manager issues the serving certificate (Secret " + deploy.CertSecretName + ") from a CA of its own and\ninjects the CA into the webhook configurations. Without it, create Secret\n" + deploy.CertSecretName + " (tls.crt, tls.key) yourself and set caBundle."},
		entry{key: "caBundle", value: "", comment: "Base64 PEM of the CA that signed Secret " + deploy.CertSecretName + "; only used when certManager.enabled is false."},
		entry{key: "config", value: opts.Config, comment: "karpgate.yaml, mounted read-only at " + deploy.ConfigPath + "."},
		entry{key: "networkPolicy", value: networkPolicy, comment: "A NetworkPolicy for karpgate's pods: the API server on the webhook port, any pod\non the metrics port (every request there is authenticated and authorized, and\nneeds the ClusterRole " + deploy.MetricsReaderClusterRole + "), the kubelet on the probe port."},
	)
	if err != nil {
		return nil, err
	}
	return encodeDocuments([]*yaml.Node{root})
}
