package localcluster

// RunConfig is the karpgate.yaml of a local run. Karpenter v1.0 still
// serves v1beta1, so admission lets v1beta1 objects through with a warning
// (CI keeps denying them): the conversion can be tried.
const RunConfig = `# karpgate.yaml of ` + "`karpgate run`" + `: save a change and karpgate reloads it
# within seconds (a broken file is refused; the last good one stays).
apiVersion: karpgate.io/v1alpha1
kind: Config
rules:
  # Let v1beta1 manifests through, with a warning, so the conversion can be
  # tried; karpgate lint in CI still denies them.
  KG401:
    actions: {admission: warn}
`
