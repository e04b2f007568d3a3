package wal

import bolt "go.etcd.io/bbolt"

// OpenHooked opens with the sync hooks the external tests use to keep the
// durable images of both files (power-loss simulation).
func OpenHooked(path string, opts *bolt.Options, afterDBSync, afterLogSync func()) (*bolt.DB, error) {
	return open(path, opts, hooks{afterDBSync: afterDBSync, afterLogSync: afterLogSync})
}
