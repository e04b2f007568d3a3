package rel

import (
	"strings"

	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// Pushdown of the per-person work to a database backend (issue 27 item 6,
// docs/privacy/units.md §11). When every table of the plan is attached
// from MariaDB/Spider and the query has no WHERE, the backend computes the
// per-(person key, group value) row counts and sums of the declared reads;
// the accumulator then gets one Partial per result row instead of one Row
// per joined row. Group sampling, the row cap C and the clamps stay in
// mechanism/bound, so the release is the same function of the data (up
// to the order of floating-point additions inside a person's own sum,
// which is clamped afterwards). Anything else streams as before.

// pushQuery is the plan's pushed-down query, or ok = false (public facts
// only: the plan's shape and the declared reads).
func (p *Plan) pushQuery() (q functions.PersonGroupQuery, personScan int, ok bool) {
	if p.where != nil {
		return q, 0, false // predicates are Go functions: not written in SQL
	}
	for _, s := range p.scans {
		q.Scans = append(q.Scans, functions.PushTable{DB: s.DB, Table: s.Table})
	}
	var tree func(n node) *functions.PushNode
	tree = func(n node) *functions.PushNode {
		if n.join == nil {
			return &functions.PushNode{Scan: n.scan}
		}
		return &functions.PushNode{Scan: -1, Left: tree(n.join.left), Right: tree(n.join.right),
			LeftCol: pushCol(n.join.l), RightCol: pushCol(n.join.r)}
	}
	q.From = tree(p.root)
	// The person: a scan whose column holds it, else the first unit scan's
	// key, mapped to its person here (personsOf) as the streaming scan does.
	personScan = -1
	for i, s := range p.scans {
		if s.member == nil {
			continue
		}
		if personScan < 0 || (s.member.Parent == "" && p.scans[personScan].member.Parent != "") {
			personScan = i
		}
	}
	if personScan < 0 {
		return q, 0, false
	}
	s := p.scans[personScan]
	q.Person = functions.PushCol{Scan: personScan, Column: spell(s.cols, s.member.Column)}
	for i, g := range p.groups {
		q.Groups = append(q.Groups, functions.PushGroup{Col: pushCol(g), Binned: p.bins[i] != nil})
	}
	for i, a := range p.aggs {
		r := p.aggR[i]
		if r == nil {
			q.Terms = append(q.Terms, functions.PushTerm{})
			continue
		}
		c := pushCol(*r)
		t := functions.PushTerm{Col: &c}
		if a.Kind != bound.Count {
			read := p.scans[r.scan].readOf[strings.ToLower(r.col)]
			if read.Transform != "" || !read.Bounded {
				return q, 0, false // a transform, or an unclipped read, is computed here
			}
			t.Sum, t.Lo, t.Hi = true, read.Lo, read.Hi
		}
		q.Terms = append(q.Terms, t)
	}
	return q, personScan, true
}

func pushCol(r ref) functions.PushCol { return functions.PushCol{Scan: r.scan, Column: r.col} }

// pushed runs the pushed-down query into acc; ok = false when the storage
// does not push it (nothing was read).
func (p *Plan) pushed(src Source, check func() error, acc *bound.Accumulator) (bool, error) {
	up, isUP := src.(functions.UnitPushdown)
	if !isUP {
		return false, nil
	}
	q, personScan, ok := p.pushQuery()
	if !ok {
		return false, nil
	}
	r := &runner{p: p, src: src, lookup: map[string]map[string]string{}, check: check}
	// The person lookup of a key column, read before the aggregate as the
	// streaming scan does (and only if the backend takes the query: the
	// lookup is decided on the same public facts, so read it lazily).
	var persons map[string]string
	parent := p.scans[personScan].member.Parent
	labels := make([]string, len(p.groups))
	seen := 0
	var lookupErr error
	return up.PersonGroups(q, func(g functions.PersonGroup) error {
		if seen++; seen%4096 == 0 && check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		if parent != "" && persons == nil && lookupErr == nil {
			persons, lookupErr = r.personsOf(parent)
		}
		if lookupErr != nil {
			return lookupErr
		}
		if g.Person == nil {
			return nil
		}
		person := keyOf(g.Person)
		if persons != nil {
			pp, ok := persons[person]
			if !ok {
				return nil // a dangling key: no person
			}
			person = pp
		}
		for j, v := range g.Groups {
			if b := p.bins[j]; b != nil {
				i := b.Of(v)
				if i < 0 || i >= len(b.Labels) {
					return nil
				}
				labels[j] = b.Labels[i]
				continue
			}
			if v == nil {
				return nil
			}
			labels[j] = keyOf(v)
		}
		acc.Partial(person, groupKey(labels), g.All, g.Rows, g.Sums)
		return nil
	})
}
