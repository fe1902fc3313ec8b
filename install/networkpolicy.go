package install

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/karpgate/karpgate/internal/deploy"
)

// NetworkPolicyOptions say who may reach karpgate's ports.
type NetworkPolicyOptions struct {
	// Enabled adds the NetworkPolicy.
	Enabled bool
	// APIServerCIDRs may reach the webhook port, unless
	// Options.TrustedSourceCIDRs names the API server's addresses, which
	// then do instead. Only the API server calls it; its addresses depend
	// on the cluster (the control-plane nodes, or on EKS the control
	// plane's network interfaces in the VPC), so the default admits every
	// address and operators narrow it.
	APIServerCIDRs []string
}

// DefaultAPIServerCIDRs admit every address: the install cannot know the
// API server's.
var DefaultAPIServerCIDRs = []string{"0.0.0.0/0", "::/0"}

// networkPolicy admits, to karpgate's pods: the API server on the webhook
// port (its trusted addresses when given, else the NetworkPolicy's); any
// pod on the metrics port, where every request is authenticated and
// authorized anyway; and anyone on the probe port, because the kubelet
// probes from the node's address. Nothing else reaches them.
func networkPolicy(opts Options) *networkingv1.NetworkPolicy {
	port := func(name string) []networkingv1.NetworkPolicyPort {
		return []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromString(name))}}
	}
	var apiServer []networkingv1.NetworkPolicyPeer
	for _, cidr := range apiServerCIDRs(opts) {
		apiServer = append(apiServer, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr}})
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   typeMeta(networkingv1.SchemeGroupVersion, "NetworkPolicy"),
		ObjectMeta: objectMeta(deploy.Name, opts.Namespace),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: *selector(),
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{
				{Ports: port(deploy.WebhookPortName), From: apiServer},
				{Ports: port(deploy.MetricsPortName), From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}}}},
				{Ports: port(deploy.HealthPortName)},
			},
		},
	}
}

// apiServerCIDRs are the addresses the NetworkPolicy admits to the webhook
// port: the API server's trusted addresses when given (karpgate trusts
// them, so nothing else needs the port), else the NetworkPolicy's own.
func apiServerCIDRs(opts Options) []string {
	if len(opts.TrustedSourceCIDRs) > 0 {
		return opts.TrustedSourceCIDRs
	}
	return opts.NetworkPolicy.APIServerCIDRs
}
