package karpenter

// Annotations karpgate owns. The conversion writes one of them when an object
// holds data its other version has no field for, and consumes it on the way
// back, so that round trips through either version are lossless.
const (
	// On a v1beta1 object: what to restore when it is converted to v1.
	RestoreV1Annotation = "karpgate.io/restore-v1"
	// On a v1 object: what to restore when it is converted to v1beta1.
	RestoreV1Beta1Annotation = "karpgate.io/restore-v1beta1"
)

// RestoreAnnotation names the annotation consumed when converting to version.
func RestoreAnnotation(version string) string {
	if version == V1 {
		return RestoreV1Annotation
	}
	return RestoreV1Beta1Annotation
}
