package state

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/karpgate/karpgate/api/karpgate/v1alpha1"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// The group versions the views decode from.
var (
	CoreV1 = schema.GroupVersion{Group: karpenter.CoreGroup, Version: karpenter.V1}
	AWSV1  = schema.GroupVersion{Group: karpenter.AWSGroup, Version: karpenter.V1}
	// KubeV1 and PolicyV1 are Kubernetes' own core/v1 and policy/v1.
	KubeV1   = corev1.SchemeGroupVersion
	PolicyV1 = schema.GroupVersion{Group: "policy", Version: "v1"}
)

// AddToScheme registers the views as the Go types of Karpenter's v1 kinds.
// Use a scheme of their own: a scheme that maps these kinds to other types
// (Karpenter's, or unstructured) must not get them too.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(CoreV1.WithKind(karpenter.KindNodePool), &NodePool{})
	s.AddKnownTypeWithName(CoreV1.WithKind(karpenter.KindNodePool+"List"), &NodePoolList{})
	s.AddKnownTypeWithName(CoreV1.WithKind(karpenter.KindNodeClaim), &NodeClaim{})
	s.AddKnownTypeWithName(CoreV1.WithKind(karpenter.KindNodeClaim+"List"), &NodeClaimList{})
	s.AddKnownTypeWithName(AWSV1.WithKind(karpenter.KindEC2NodeClass), &EC2NodeClass{})
	s.AddKnownTypeWithName(AWSV1.WithKind(karpenter.KindEC2NodeClass+"List"), &EC2NodeClassList{})
	metav1.AddToGroupVersion(s, CoreV1)
	metav1.AddToGroupVersion(s, AWSV1)
	return nil
}

// AddPodViewsToScheme registers the Pod and PodDisruptionBudget views as the
// Go types of core/v1 Pod and policy/v1 PodDisruptionBudget: a cache built
// on this scheme holds only the view, never a whole Pod.
func AddPodViewsToScheme(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(KubeV1.WithKind("Pod"), &Pod{})
	s.AddKnownTypeWithName(KubeV1.WithKind("PodList"), &PodList{})
	s.AddKnownTypeWithName(PolicyV1.WithKind("PodDisruptionBudget"), &PodDisruptionBudget{})
	s.AddKnownTypeWithName(PolicyV1.WithKind("PodDisruptionBudgetList"), &PodDisruptionBudgetList{})
	metav1.AddToGroupVersion(s, PolicyV1)
	return nil
}

// NewScheme returns the scheme of the loop and of the commands that read
// what it reads: the Karpenter views, the Pod and PodDisruptionBudget views,
// core/v1 Nodes and karpgate's own RolloutPlan. It holds no other core type, so nothing decodes a Pod
// into corev1.Pod by mistake.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	s.AddKnownTypes(KubeV1, &corev1.Node{}, &corev1.NodeList{})
	metav1.AddToGroupVersion(s, KubeV1)
	_ = AddToScheme(s)
	_ = AddPodViewsToScheme(s)
	// karpgate's own kinds (the RolloutPlan), whole: they are few and small.
	_ = v1alpha1.AddToScheme(s)
	return s
}

// RESTConfig returns a copy of cfg that speaks JSON: controller-runtime
// asks the API server for protobuf for Kubernetes' own kinds, which the
// views (Pod, PodDisruptionBudget) cannot decode, and JSON is what every
// view decodes from. Every client and cache on NewScheme must use it.
func RESTConfig(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.ContentType = runtime.ContentTypeJSON
	out.AcceptContentTypes = runtime.ContentTypeJSON
	return out
}
