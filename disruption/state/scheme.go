package state

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/karpgate/karpgate/internal/karpenter"
)

// The group versions the views decode from.
var (
	CoreV1 = schema.GroupVersion{Group: karpenter.CoreGroup, Version: karpenter.V1}
	AWSV1  = schema.GroupVersion{Group: karpenter.AWSGroup, Version: karpenter.V1}
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

// NewScheme returns a scheme with the views and core/v1 (for Nodes).
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err) // registering built-in types cannot fail
	}
	_ = AddToScheme(s)
	return s
}
