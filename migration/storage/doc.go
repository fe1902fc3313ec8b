// Package storage migrates Karpenter's objects to v1 storage, the work
// behind `karpgate migrate-storage`: the storage version migration
// Karpenter's upgrade guide asks for before v1.1, whose CRDs serve only v1.
//
// Objects written while a CRD stored v1beta1 stay v1beta1 in etcd until
// something writes them again. Run rewrites every NodePool, NodeClaim and
// EC2NodeClass through the v1 API with an update that changes nothing: the
// API server stores what it writes in the storage version, v1, and skips
// the write for objects already stored as exactly that. Only when every
// write has succeeded does it remove v1beta1 from the CRDs'
// status.storedVersions, through the status subresource; a CRD whose
// storedVersions is already [v1] is left alone.
//
// No field changes: each object is written exactly as read, with its
// resourceVersion (a conflict means someone wrote it meanwhile, and it is
// read again); a server-side dry run first makes sure no mutating webhook
// would change it, and an object it would change is not written (and
// counts as failed). Lists are paginated. Progress goes to a state file
// after every page, so an interrupted or failed run, started again,
// resumes where it stopped and retries only what failed.
package storage
