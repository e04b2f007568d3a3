package dpquery

import (
	"crypto/sha256"
	"encoding/json"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/dpsql/dpsql/mechanism/agg"
)

// Answer cache (issue 12.2): dashboards re-send the same queries. The same
// measurement (table, filter, group domains, summed columns and their
// bounds, ε) on the same snapshot (write epoch and row count, see
// catalog/anscache.go) returns the stored noisy answer at no charge: it is
// the very value already released and paid for, so repeating the query
// cannot average its noise away. Different HAVING / ORDER BY / LIMIT or
// selected columns over the same measurement reuse it too (post-processing).
// SET SESSION dp_fresh = 1 forces a new, charged release (which then
// replaces the stored answer).
//
// The cache is per account (issue 25): the key names the account, so an
// account never receives, for free, an answer that another account paid
// from its quota, and cannot learn from a cache hit that another account
// asked the same query. Two accounts asking the same query each pay once;
// each then re-reads its own answer for free (docs/bi.md).

const varFresh = "dp_fresh"

func init() {
	sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{
		&sql.MysqlSystemVariable{Name: varFresh, Scope: sql.GetMysqlScope(sql.SystemVariableScope_Session), Dynamic: true,
			Type: types.NewSystemBoolType(varFresh), Default: int8(0)},
	})
}

type cacheKey struct {
	Account string     `json:"account"`
	Table   string     `json:"table"`
	Epoch   uint64     `json:"epoch"`
	N       int64      `json:"n"`
	Eps     float64    `json:"eps"`
	Delta   float64    `json:"delta"`
	Select  bool       `json:"select"`
	Filter  string     `json:"filter"`
	Keys    [][]string `json:"keys"` // name, then domain
	Sums    []cacheSum `json:"sums"`
}

type cacheSum struct {
	Name      string     `json:"name"`
	Bounds    [2]float64 `json:"bounds"`
	Transform string     `json:"transform,omitempty"` // a new transform is a new measurement
}

// cacheID names the measurement on the current snapshot.
func (q *dpAggQuery) cacheID(account string, epoch uint64, n int64) []byte {
	k := cacheKey{Account: account, Table: q.key, Epoch: epoch, N: n, Eps: q.eps, Delta: q.delta, Select: q.sel != nil}
	if q.filter != nil {
		k.Filter = q.filter.String()
	}
	for _, kc := range q.keys {
		k.Keys = append(k.Keys, append([]string{kc.name}, kc.domain...))
	}
	for i, name := range q.sumNames {
		k.Sums = append(k.Sums, cacheSum{Name: name, Bounds: [2]float64{q.plan.Sums[i].Lo, q.plan.Sums[i].Hi}, Transform: q.sumReads[i].Transform})
	}
	buf, _ := json.Marshal(k)
	h := sha256.Sum256(buf)
	return h[:]
}

func sessionFresh(ctx *sql.Context) bool {
	v, err := ctx.GetSessionVariable(ctx, varFresh)
	if err != nil {
		return false
	}
	switch x := v.(type) {
	case int8:
		return x != 0
	case int64:
		return x != 0
	case bool:
		return x
	}
	return false
}

// cached returns the stored answer of this measurement, if any.
func (n *dpAggNode) cached(id []byte) (*agg.Result, bool) {
	blob, ok := n.g.cat.CachedAnswer(id)
	if !ok {
		return nil, false
	}
	var r agg.Result
	if err := json.Unmarshal(blob, &r); err != nil || (n.q.sel == nil && len(r.Count) != n.q.groups) || (n.q.sel != nil && len(r.Keys) != len(r.Count)) {
		return nil, false
	}
	return &r, true
}

func (n *dpAggNode) store(id []byte, r *agg.Result) {
	blob, err := json.Marshal(r)
	if err == nil {
		err = n.g.cat.StoreAnswer(n.q.key, id, blob)
	}
	if err != nil && n.g.env != nil && n.g.env.Log != nil {
		n.g.env.Log.WithError(err).WithField("table", n.q.key).Warn("could not cache a DP answer")
	}
}
