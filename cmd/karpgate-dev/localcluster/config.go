package localcluster

// RunConfig is the karpgate.yaml of a local run: the defaults, with a
// commented example to edit, because trying the hot reload is part of
// trying karpgate. (v1beta1 objects already only warn at admission by
// default, so the conversion can be tried; CI denies them.)
const RunConfig = `# karpgate.yaml of ` + "`karpgate run`" + `: save a change and karpgate reloads it
# within seconds (a broken file is refused; the last good one stays).
# Every setting is shown in config/karpgate.example.yaml.
apiVersion: karpgate.io/v1alpha1
kind: Config
# For example, let @latest AMIs through production with only a warning:
# rules:
#   KG101:
#     actions: {admission: warn}
`
