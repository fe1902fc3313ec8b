package lastgood

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/policies/policywatch"
)

// The ConfigMap's key and annotations.
const (
	// DataKey holds the files, as JSON.
	DataKey = "policy.json"
	// SumAnnotation is the files' fingerprint (policywatch.Files.Sum),
	// hex: a Save of the same files writes nothing, and Load refuses
	// files that do not match it.
	SumAnnotation     = "karpgate.io/last-good-sum"
	SavedAtAnnotation = "karpgate.io/saved-at"
	SavedByAnnotation = "karpgate.io/saved-by"
)

// maxBytes is what the files may take: a ConfigMap holds at most 1 MiB,
// and the JSON encoding writes file contents in base64.
const maxBytes = 900 << 10

// Store keeps the last good files in a ConfigMap.
type Store struct {
	Client    client.Client
	Namespace string
	Name      string
	// Writer names who saved, in SavedByAnnotation (the pod).
	Writer string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

var _ policywatch.LastGood = Store{}

// Save writes files unless the ConfigMap holds them already. Every replica
// saves what it compiled; when two write at once, the one that loses the
// race (a conflict) has nothing to add.
func (s Store) Save(ctx context.Context, files policywatch.Files) error {
	sum := files.Sum()
	want := hex.EncodeToString(sum[:])
	data, err := json.Marshal(files)
	if err != nil {
		return err
	}
	if len(data) > maxBytes {
		return fmt.Errorf("the configuration and policies take %d KiB, more than the %d KiB a ConfigMap can keep as the last good ones", len(data)>>10, maxBytes>>10)
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	cm := &corev1.ConfigMap{}
	err = s.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Name}, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: map[string]string{
			"app.kubernetes.io/part-of": "karpgate", "app.kubernetes.io/managed-by": "karpgate",
		}}}
	case err != nil:
		return fmt.Errorf("reading ConfigMap %s/%s: %w", s.Namespace, s.Name, err)
	case cm.Annotations[SumAnnotation] == want:
		return nil
	}
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[SumAnnotation] = want
	cm.Annotations[SavedAtAnnotation] = now().UTC().Format(time.RFC3339)
	cm.Annotations[SavedByAnnotation] = s.Writer
	cm.Data = map[string]string{DataKey: string(data)}
	if cm.ResourceVersion == "" {
		err = s.Client.Create(ctx, cm)
	} else {
		err = s.Client.Update(ctx, cm)
	}
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return nil // another replica saved at the same time
	}
	if err != nil {
		return fmt.Errorf("writing ConfigMap %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}

// Load reads the files last saved, and when they were saved.
func (s Store) Load(ctx context.Context) (policywatch.Files, time.Time, error) {
	cm := &corev1.ConfigMap{}
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Name}, cm); err != nil {
		return policywatch.Files{}, time.Time{}, fmt.Errorf("reading ConfigMap %s/%s: %w", s.Namespace, s.Name, err)
	}
	raw, ok := cm.Data[DataKey]
	if !ok {
		return policywatch.Files{}, time.Time{}, fmt.Errorf("ConfigMap %s/%s has no %s", s.Namespace, s.Name, DataKey)
	}
	var files policywatch.Files
	if err := json.Unmarshal([]byte(raw), &files); err != nil {
		return policywatch.Files{}, time.Time{}, fmt.Errorf("ConfigMap %s/%s: %s: %w", s.Namespace, s.Name, DataKey, err)
	}
	sum := files.Sum()
	if got := hex.EncodeToString(sum[:]); got != cm.Annotations[SumAnnotation] {
		return policywatch.Files{}, time.Time{}, errors.New("ConfigMap " + s.Namespace + "/" + s.Name + ": the files do not match their " + SumAnnotation + " annotation; it was edited by hand")
	}
	saved, _ := time.Parse(time.RFC3339, cm.Annotations[SavedAtAnnotation])
	return files, saved, nil
}
