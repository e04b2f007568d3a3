package catalog

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

// Per-account defaults of DP aggregate queries (issue 12): the ε and δ an
// analyst's aggregate query spends when the session sets no dp_epsilon.
// Stored under their own key prefix and read from bbolt on use, so that the
// in-memory catalog is untouched.

const defaultsPrefix = "dpdefaults/"

type dpDefaults struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// SetDPDefaults sets (or, with ε = 0, removes) the default ε, δ of user.
func (c *Catalog) SetDPDefaults(user string, eps, delta float64) error {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps < 0 || math.IsNaN(delta) || delta < 0 || delta >= 1 {
		return fmt.Errorf("defaults must have finite ε ≥ 0 and δ in [0, 1), got ε = %v, δ = %v", eps, delta)
	}
	key := []byte(defaultsPrefix + strings.ToLower(user))
	return wal.Update(c.db, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketName)
		if eps == 0 {
			return b.Delete(key)
		}
		buf, err := json.Marshal(dpDefaults{eps, delta})
		if err != nil {
			return err
		}
		return b.Put(key, buf)
	})
}

// DPDefaults returns the default ε, δ of user, if set.
func (c *Catalog) DPDefaults(user string) (eps, delta float64, ok bool) {
	var d dpDefaults
	_ = c.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketName)
		if b == nil {
			return nil
		}
		if v := b.Get([]byte(defaultsPrefix + strings.ToLower(user))); v != nil {
			ok = json.Unmarshal(v, &d) == nil
		}
		return nil
	})
	return d.Epsilon, d.Delta, ok
}
