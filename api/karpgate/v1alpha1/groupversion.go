package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and Version of karpgate's API.
const (
	Group   = "karpgate.io"
	Version = "v1alpha1"
)

// GroupVersion is karpgate.io/v1alpha1.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// AddToScheme registers the kinds of karpgate.io/v1alpha1.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &RolloutPlan{}, &RolloutPlanList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
