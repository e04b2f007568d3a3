package rel

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dpsql/dpsql/budget"
	"github.com/dpsql/dpsql/catalog"
	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// Col names a column of a table in FROM: Table is its alias (or its name);
// empty resolves the column among all tables, refusing ambiguity.
type Col struct{ Table, Column string }

func (c Col) String() string {
	if c.Table == "" {
		return c.Column
	}
	return c.Table + "." + c.Column
}

// Node is a relation in FROM: a Scan or a Join.
type Node interface{ isNode() }

// Scan reads one table.
type Scan struct{ DB, Table, Alias string }

// Join is an inner equi-join on Left.LeftCol = Right.RightCol.
type Join struct {
	Left, Right       Node
	LeftCol, RightCol Col
}

func (Scan) isNode() {}
func (Join) isNode() {}

// Predicate is a WHERE clause over the joined row. Eval receives the values
// of Columns() in order and must be total: no panic, no error, time that
// does not depend on the values (false drops the row). String is its
// canonical text (part of the plan's key).
type Predicate interface {
	Columns() []Col
	Eval(vals []any) bool
	String() string
}

// Agg is one aggregate: COUNT(*) (Col nil), COUNT(col), SUM(col), AVG(col),
// with optional contribution bounds per group (SUM: of a person's sum; AVG:
// of a person's mean).
type Agg struct {
	Kind   bound.Kind
	Col    *Col
	Bounds *[2]float64
	// Auto (SUM only; contribution_bounds_per_group => auto): the clamp is
	// chosen privately inside max_rows_contributed_per_group's upper limit
	// times the declared bounds (docs/privacy/units.md §3a).
	Auto bool
}

// Options are the query's privacy parameters (BigQuery's OPTIONS or the
// session's dp_epsilon / dp_delta).
type Options struct {
	Epsilon, Delta float64
	MaxGroups      int // max_groups_contributed; 0: DefaultMaxGroups
	MaxRows        int // max_rows_contributed_per_group (COUNT); 0: DefaultMaxRows
	// AutoRows (max_rows_contributed_per_group = auto): C is chosen
	// privately, and so is the clamp of every SUM without explicit bounds.
	AutoRows          bool
	PrivacyUnitColumn *Col // must hold the person of the declared unit
}

// Defaults, from public quantities only (docs/privacy/units.md §5).
const (
	DefaultMaxGroups = 1
	DefaultMaxRows   = 1
)

// Query is SELECT group…, agg… FROM From [WHERE Where] [GROUP BY group…].
type Query struct {
	From    Node
	Where   Predicate
	GroupBy []Col
	// Bins, aligned with GroupBy (nil entries, or a shorter slice: plain
	// columns), puts a group column's values into public bins (DP_HISTOGRAM
	// over declared bounds or a declared domain).
	Bins    []*Bins
	Aggs    []Agg
	Options Options
}

// Bins maps a stored value of a group column to one of public labels, the
// group's domain in output order. Of must be total (no panic, −1 for a
// value in no bin: the row is in no group) and cheap; Key is the binning's
// canonical text (part of the plan's key).
type Bins struct {
	Labels []string
	Of     func(v any) int
	Key    string
}

// Meta is the public catalog and schema.
type Meta interface {
	Table(key string) (catalog.Table, bool)
	Columns(db, table string) ([]string, error) // schema order and spelling
}

// ErrRefused wraps every refusal of Compile (all before any charge).
var ErrRefused = errors.New("DP query refused")

func refuse(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRefused}, a...)...)
}

// scanInfo is one compiled scan.
type scanInfo struct {
	Scan
	key     string
	cols    []string // schema spelling
	entry   catalog.Table
	member  *catalog.Member
	public  bool
	need    map[string]bool // columns the run reads (lower case)
	readOf  map[string]catalog.Read
	aliasLC string
}

// ref is a resolved column: scan index and schema spelling.
type ref struct {
	scan int
	col  string
}

// joinInfo is one compiled join.
type joinInfo struct {
	left, right node // compiled subtrees
	l, r        ref
}

// node is a compiled relation: a scan index or a join.
type node struct {
	scan  int // ≥ 0 for a scan
	join  *joinInfo
	scans []int // scans below
}

// Plan is a compiled query: everything public, ready to run.
type Plan struct {
	Unit   string   // "db.unit"
	Tables []string // catalog keys of the unit's tables read
	spec   bound.Spec
	bp     *bound.Plan
	scans  []*scanInfo
	root   node
	where  Predicate
	whereR []ref
	groups []ref
	bins   []*Bins // aligned with groups; nil: the column's own value
	aggs   []Agg
	aggR   []*ref
	key    string
	// Unit tables on the scans' paths, read for their keys only, and the
	// primary key each is looked up by.
	parents   map[string]*memberRef
	parentKey map[string]string
	// maxRows holds the owners' declared maximum row counts of the tables
	// read (scans and parents), by key; absent: none declared.
	maxRows map[string]int64
}

// Key is the canonical text of the compiled plan (the answer cache's key
// with the tables' write epochs).
func (p *Plan) Key() string { return p.key }

// Events are the accountant's record of the release.
func (p *Plan) Events() []budget.Event { return p.bp.Events() }

// Bound is the contribution-bounding plan (scales, threshold).
func (p *Plan) Bound() *bound.Plan { return p.bp }

// Compile checks q against the public catalog and returns its plan, or a
// refusal (wrapping ErrRefused) saying what to change.
func Compile(q Query, m Meta) (*Plan, error) {
	p := &Plan{where: q.Where, aggs: q.Aggs}
	aliases := map[string]int{}
	var build func(n Node) (node, error)
	build = func(n Node) (node, error) {
		switch x := n.(type) {
		case Scan:
			return p.addScan(x, m, aliases)
		case *Scan:
			return p.addScan(*x, m, aliases)
		case Join:
			return p.addJoin(x, build)
		case *Join:
			return p.addJoin(*x, build)
		}
		return node{}, refuse("FROM: unsupported relation %T", n)
	}
	if q.From == nil {
		return nil, refuse("a DP query reads at least one table")
	}
	root, err := build(q.From)
	if err != nil {
		return nil, err
	}
	p.root = root
	// The unit: every protected table must belong to the same one.
	for _, s := range p.scans {
		switch {
		case s.member != nil:
			if p.Unit == "" {
				p.Unit = s.member.Unit
			} else if p.Unit != s.member.Unit {
				return nil, refuse("tables of two privacy units (%s, %s) in one query: a person of one unit is not a person of the other", p.Unit, s.member.Unit)
			}
		case !s.public:
			return nil, refuse("table %s is protected at row level (no privacy unit); unit queries read tables of one declared unit and public tables (declare it with CALL dp_privacy_unit, or query it alone through the row-level DP aggregates)", s.key)
		}
	}
	if p.Unit == "" {
		return nil, refuse("no table of a privacy unit in FROM: the query reads public tables only and needs no DP")
	}
	seen := map[string]bool{}
	for _, s := range p.scans {
		if s.member != nil && !seen[s.key] {
			seen[s.key] = true
			p.Tables = append(p.Tables, s.key)
		}
	}
	if err := p.compilePaths(m, seen); err != nil {
		return nil, err
	}
	sort.Strings(p.Tables)
	if err := p.checkJoins(p.root); err != nil {
		return nil, err
	}
	if q.Where != nil {
		for _, c := range q.Where.Columns() {
			r, err := p.resolve(c)
			if err != nil {
				return nil, fmt.Errorf("WHERE: %w", err)
			}
			p.whereR = append(p.whereR, r)
		}
	}
	if err := p.compileOptions(q.Options); err != nil {
		return nil, err
	}
	if err := p.compileGroups(q); err != nil {
		return nil, err
	}
	if err := p.compileAggs(q); err != nil {
		return nil, err
	}
	bp, err := bound.New(p.spec)
	if err != nil {
		return nil, refuse("%v", err)
	}
	p.bp = bp
	p.key = p.canonical()
	return p, nil
}

func (p *Plan) addScan(s Scan, m Meta, aliases map[string]int) (node, error) {
	alias := s.Alias
	if alias == "" {
		alias = s.Table
	}
	al := strings.ToLower(alias)
	if _, dup := aliases[al]; dup {
		return node{}, refuse("table alias %s is used twice: give each table in FROM its own alias", alias)
	}
	key := catalog.Key(s.DB, s.Table)
	cols, err := m.Columns(s.DB, s.Table)
	if err != nil {
		return node{}, refuse("table %s does not exist", key)
	}
	e, _ := m.Table(key)
	p.noteMaxRows(key, e)
	si := &scanInfo{Scan: s, key: key, cols: cols, entry: e, member: e.Unit, public: !e.Protected && e.Unit == nil,
		need: map[string]bool{}, readOf: map[string]catalog.Read{}, aliasLC: al}
	si.Scan.Alias = alias
	if si.member != nil {
		si.need[si.member.Column] = true
	}
	i := len(p.scans)
	p.scans = append(p.scans, si)
	aliases[al] = i
	return node{scan: i, scans: []int{i}}, nil
}

func (p *Plan) addJoin(j Join, build func(Node) (node, error)) (node, error) {
	l, err := build(j.Left)
	if err != nil {
		return node{}, err
	}
	r, err := build(j.Right)
	if err != nil {
		return node{}, err
	}
	lr, err := p.resolveIn(j.LeftCol, l.scans)
	if err != nil {
		// ON b.x = a.y written the other way round.
		lr2, err2 := p.resolveIn(j.RightCol, l.scans)
		rr2, err3 := p.resolveIn(j.LeftCol, r.scans)
		if err2 != nil || err3 != nil {
			return node{}, fmt.Errorf("JOIN ON %s = %s: %w", j.LeftCol, j.RightCol, err)
		}
		return node{scan: -1, join: &joinInfo{left: l, right: r, l: lr2, r: rr2}, scans: append(append([]int(nil), l.scans...), r.scans...)}, nil
	}
	rr, err := p.resolveIn(j.RightCol, r.scans)
	if err != nil {
		return node{}, fmt.Errorf("JOIN ON %s = %s: %w", j.LeftCol, j.RightCol, err)
	}
	return node{scan: -1, join: &joinInfo{left: l, right: r, l: lr, r: rr}, scans: append(append([]int(nil), l.scans...), r.scans...)}, nil
}

// compilePaths records the unit tables on the scans' paths (a query on
// items alone reads orders to find each item's customer).
func (p *Plan) compilePaths(m Meta, seen map[string]bool) error {
	p.parents, p.parentKey = map[string]*memberRef{}, map[string]string{}
	for _, s := range p.scans {
		cur := s.member
		for hops := 0; cur != nil && cur.Parent != ""; hops++ {
			if hops > 64 {
				return refuse("the unit path of %s is longer than 64 hops", s.key)
			}
			parent := cur.Parent
			if k, ok := p.parentKey[parent]; ok && k != cur.ParentKey {
				return refuse("table %s is reached by two different keys (%s, %s)", parent, k, cur.ParentKey)
			}
			p.parentKey[parent] = cur.ParentKey
			e, ok := m.Table(parent)
			if !ok || e.Unit == nil || e.Unit.Unit != p.Unit {
				return refuse("table %s on the unit path of %s is not in unit %s", parent, s.key, p.Unit)
			}
			if _, ok := p.parents[parent]; !ok {
				db, table, _ := strings.Cut(parent, ".")
				cols, err := m.Columns(db, table)
				if err != nil {
					return refuse("table %s on the unit path of %s does not exist", parent, s.key)
				}
				p.parents[parent] = &memberRef{db: db, table: table, m: *e.Unit, cols: cols}
				p.noteMaxRows(parent, e)
			}
			if !seen[parent] {
				seen[parent] = true
				p.Tables = append(p.Tables, parent)
			}
			cur = e.Unit
		}
	}
	return nil
}

// resolve finds a column among all scans.
func (p *Plan) resolve(c Col) (ref, error) {
	all := make([]int, len(p.scans))
	for i := range all {
		all[i] = i
	}
	return p.resolveIn(c, all)
}

func (p *Plan) resolveIn(c Col, scans []int) (ref, error) {
	found := ref{scan: -1}
	for _, i := range scans {
		s := p.scans[i]
		if c.Table != "" && !strings.EqualFold(c.Table, s.Alias) {
			continue
		}
		for _, name := range s.cols {
			if strings.EqualFold(name, c.Column) {
				if found.scan >= 0 {
					return ref{}, refuse("column %s is ambiguous: qualify it with its table", c)
				}
				found = ref{scan: i, col: name}
			}
		}
	}
	if found.scan < 0 {
		return ref{}, refuse("unknown column %s", c)
	}
	p.scans[found.scan].need[strings.ToLower(found.col)] = true
	return found, nil
}

// unitBelow reports whether a subtree reads a table of the unit.
func (p *Plan) unitBelow(n node) bool {
	for _, i := range n.scans {
		if p.scans[i].member != nil {
			return true
		}
	}
	return false
}

// checkJoins applies the join rule of docs/privacy/units.md §4.
func (p *Plan) checkJoins(n node) error {
	if n.join == nil {
		return nil
	}
	j := n.join
	if err := p.checkJoins(j.left); err != nil {
		return err
	}
	if err := p.checkJoins(j.right); err != nil {
		return err
	}
	if !p.unitBelow(j.left) || !p.unitBelow(j.right) {
		return nil // public ⨝ anything: a person's rows may multiply, bounding covers it
	}
	if p.preserves(j.l, j.r) || p.preserves(j.r, j.l) {
		return nil
	}
	a, b := p.scans[j.l.scan], p.scans[j.r.scan]
	return refuse("JOIN ON %s.%s = %s.%s does not preserve the privacy unit %s: two tables of a unit join only along the unit's keys (a foreign key of the unit path, e.g. orders.customer_id = customers.id, or both tables' person columns), so that each joined row belongs to one person",
		a.Alias, j.l.col, b.Alias, j.r.col, p.Unit)
}

// preserves reports whether x = y links rows of one person: both are
// person columns, or x is the unit-path foreign key of its table into y's
// table's primary key.
func (p *Plan) preserves(x, y ref) bool {
	a, b := p.scans[x.scan], p.scans[y.scan]
	if a.member == nil || b.member == nil {
		return false
	}
	xc, yc := strings.ToLower(x.col), strings.ToLower(y.col)
	if a.member.Parent == "" && b.member.Parent == "" && xc == a.member.Column && yc == b.member.Column {
		return true
	}
	return a.member.Parent == b.key && xc == a.member.Column && yc == a.member.ParentKey
}

func (p *Plan) compileOptions(o Options) error {
	if math.IsNaN(o.Epsilon) || !(o.Epsilon > 0) || math.IsInf(o.Epsilon, 0) {
		return refuse("epsilon must be positive and finite, got %v", o.Epsilon)
	}
	if math.IsNaN(o.Delta) || o.Delta < 0 || o.Delta >= 1 {
		return refuse("delta must be in [0, 1), got %v", o.Delta)
	}
	p.spec.Epsilon, p.spec.Delta = o.Epsilon, o.Delta
	p.spec.MaxGroups, p.spec.MaxRows = o.MaxGroups, o.MaxRows
	if o.AutoRows {
		if o.MaxRows != 0 {
			return refuse("max_rows_contributed_per_group is either a number or auto, not both")
		}
		p.spec.MaxRows, p.spec.AutoRows = bound.AutoMaxRows, true
	}
	if p.spec.MaxGroups == 0 {
		p.spec.MaxGroups = DefaultMaxGroups
	}
	if p.spec.MaxRows == 0 {
		p.spec.MaxRows = DefaultMaxRows
	}
	if c := o.PrivacyUnitColumn; c != nil {
		r, err := p.resolve(*c)
		if err != nil {
			return fmt.Errorf("privacy_unit_column: %w", err)
		}
		s := p.scans[r.scan]
		if s.member == nil || s.member.Parent != "" || strings.ToLower(r.col) != s.member.Column {
			return refuse("privacy_unit_column %s does not hold the person of the declared unit %s (%s)", c, p.Unit, p.personColumns())
		}
	}
	return nil
}

// personColumns lists the columns of the query's tables that hold the
// person directly.
func (p *Plan) personColumns() string {
	var out []string
	for _, s := range p.scans {
		if s.member != nil && s.member.Parent == "" {
			out = append(out, s.Alias+"."+s.member.Column)
		}
	}
	if len(out) == 0 {
		return "none of the tables in FROM holds it directly"
	}
	return "declared: " + strings.Join(out, ", ")
}

func (p *Plan) compileGroups(q Query) error {
	var domains [][]string
	declared := true
	if len(q.Bins) > len(q.GroupBy) {
		return refuse("%d binnings for %d GROUP BY columns", len(q.Bins), len(q.GroupBy))
	}
	for i, g := range q.GroupBy {
		r, err := p.resolve(g)
		if err != nil {
			return fmt.Errorf("GROUP BY: %w", err)
		}
		p.groups = append(p.groups, r)
		var b *Bins
		if i < len(q.Bins) {
			b = q.Bins[i]
		}
		p.bins = append(p.bins, b)
		dom := p.scans[r.scan].entry.Labels[strings.ToLower(r.col)]
		if b != nil {
			if len(b.Labels) == 0 || b.Of == nil {
				return refuse("GROUP BY %s: a binning needs public labels and a bin function", g)
			}
			dom = b.Labels
		}
		if len(dom) == 0 {
			declared = false
		}
		domains = append(domains, dom)
	}
	if !declared {
		if !(p.spec.Delta > 0) {
			return refuse("GROUP BY a column without a public domain selects the groups privately, which needs a δ (OPTIONS(delta = …) or SET SESSION dp_delta), or the owner declares the domain (CALL dp_domain)")
		}
		return nil
	}
	// The cross product of the declared domains, in declared order.
	size := 1
	for _, d := range domains {
		size *= len(d)
		if size > bound.MaxDomain {
			return refuse("the GROUP BY domain has more than %d groups", bound.MaxDomain)
		}
	}
	keys := make([]string, 0, size)
	tuple := make([]string, len(domains))
	var walk func(i int)
	walk = func(i int) {
		if i == len(domains) {
			keys = append(keys, groupKey(tuple))
			return
		}
		for _, v := range domains[i] {
			tuple[i] = v
			walk(i + 1)
		}
	}
	walk(0)
	p.spec.Domain = keys
	return nil
}

// groupKey encodes a tuple of labels injectively (length-prefixed), cheap
// enough for every row; splitKey inverts it.
func groupKey(labels []string) string {
	if len(labels) == 1 {
		return strconv.Itoa(len(labels[0])) + ":" + labels[0]
	}
	var b strings.Builder
	for _, l := range labels {
		b.WriteString(strconv.Itoa(len(l)))
		b.WriteByte(':')
		b.WriteString(l)
	}
	return b.String()
}

// splitKey decodes groupKey; ok is false on a malformed key.
func splitKey(k string) (labels []string, ok bool) {
	for len(k) > 0 {
		i := strings.IndexByte(k, ':')
		if i < 0 {
			return nil, false
		}
		n, err := strconv.Atoi(k[:i])
		if err != nil || n < 0 || i+1+n > len(k) {
			return nil, false
		}
		labels = append(labels, k[i+1:i+1+n])
		k = k[i+1+n:]
	}
	return labels, true
}

// keyOf is the label of a stored value, fast for the integer keys joins
// and persons usually have (same text as functions.LabelString).
func keyOf(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int:
		return strconv.Itoa(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case uint32:
		return strconv.FormatUint(uint64(x), 10)
	case string:
		return x
	}
	return functions.LabelString(v)
}

func (p *Plan) compileAggs(q Query) error {
	if len(q.Aggs) == 0 {
		return refuse("a DP query has at least one aggregate (COUNT, SUM, AVG)")
	}
	for _, a := range q.Aggs {
		var r *ref
		if a.Col != nil {
			x, err := p.resolve(*a.Col)
			if err != nil {
				return fmt.Errorf("%s: %w", a.Kind, err)
			}
			r = &x
		}
		m := bound.Measure{Kind: a.Kind}
		switch a.Kind {
		case bound.Count:
			if a.Bounds != nil || a.Auto {
				return refuse("COUNT takes no contribution bounds: a person counts at most max_rows_contributed_per_group rows per group (max_rows_contributed_per_group = auto chooses it privately)")
			}
		case bound.Sum, bound.Avg:
			if r == nil {
				return refuse("%s needs a column", a.Kind)
			}
			s := p.scans[r.scan]
			read := s.entry.ReadOf(r.col)
			s.readOf[strings.ToLower(r.col)] = read
			auto := a.Auto || (p.spec.AutoRows && a.Kind == bound.Sum && a.Bounds == nil)
			switch {
			case a.Auto && a.Bounds != nil:
				return refuse("%s(%s): contribution_bounds_per_group is either (lo, hi) or auto, not both", a.Kind, r.col)
			case a.Auto && a.Kind != bound.Sum:
				return refuse("contribution_bounds_per_group => auto is for SUM; AVG's per-person mean lies in the column's declared bounds, or give (lo, hi)")
			case auto && !read.Bounded:
				return refuse("%s(%s) with automatic bounds needs the column's declared bounds, the public limits of the choice (CALL dp_bounds('%s', '%s', lo, hi))", a.Kind, r.col, s.Table, r.col)
			case auto:
				// The public outer limits: C_max rows' worth of the
				// declared bounds; the clamp is chosen inside them.
				c := float64(bound.AutoMaxRows)
				m.Lo, m.Hi, m.Auto = c*math.Min(read.Lo, 0), c*math.Max(read.Hi, 0), true
			case a.Bounds != nil:
				m.Lo, m.Hi = a.Bounds[0], a.Bounds[1]
			case !read.Bounded:
				return refuse("%s(%s) needs bounds: the owner declares them (CALL dp_bounds('%s', '%s', lo, hi)) or the query gives contribution_bounds_per_group => (lo, hi)", a.Kind, r.col, s.Table, r.col)
			case a.Kind == bound.Sum:
				c := float64(p.spec.MaxRows)
				m.Lo, m.Hi = c*math.Min(read.Lo, 0), c*math.Max(read.Hi, 0)
			default:
				m.Lo, m.Hi = read.Lo, read.Hi
			}
		default:
			return refuse("aggregate %v is not supported", a.Kind)
		}
		p.spec.Measures = append(p.spec.Measures, m)
		p.aggR = append(p.aggR, r)
	}
	return nil
}

// canonical is the plan's key: every public input of the release.
func (p *Plan) canonical() string {
	var b strings.Builder
	var walk func(n node)
	walk = func(n node) {
		if n.join == nil {
			s := p.scans[n.scan]
			fmt.Fprintf(&b, "scan(%s as %s)", s.key, s.aliasLC)
			return
		}
		b.WriteString("join(")
		walk(n.join.left)
		b.WriteString(",")
		walk(n.join.right)
		fmt.Fprintf(&b, ",%d.%s=%d.%s)", n.join.l.scan, strings.ToLower(n.join.l.col), n.join.r.scan, strings.ToLower(n.join.r.col))
	}
	walk(p.root)
	if p.where != nil {
		fmt.Fprintf(&b, " where(%s)", p.where.String())
	}
	for i, g := range p.groups {
		fmt.Fprintf(&b, " group(%d.%s)", g.scan, strings.ToLower(g.col))
		if bn := p.bins[i]; bn != nil {
			fmt.Fprintf(&b, " bins(%q:%q)", bn.Key, bn.Labels)
		}
	}
	for _, s := range p.scans {
		if s.member != nil {
			fmt.Fprintf(&b, " unit(%s:%+v)", s.key, *s.member)
		}
		cols := make([]string, 0, len(s.readOf))
		for c := range s.readOf {
			cols = append(cols, c)
		}
		sort.Strings(cols) // a stable key: map order is random
		for _, c := range cols {
			fmt.Fprintf(&b, " read(%s.%s:%+v)", s.key, c, s.readOf[c])
		}
	}
	spec, _ := json.Marshal(p.spec)
	fmt.Fprintf(&b, " spec%s", spec)
	for i, a := range p.aggs {
		fmt.Fprintf(&b, " agg(%v", a.Kind)
		if r := p.aggR[i]; r != nil {
			fmt.Fprintf(&b, ",%d.%s", r.scan, strings.ToLower(r.col))
		}
		b.WriteString(")")
	}
	return b.String()
}

// Describe is a one-line public summary (SHOW WARNINGS, dry runs).
func (p *Plan) Describe() string {
	var parts []string
	for i, m := range p.spec.Measures {
		a, c := p.bp.Scales(i)
		s := fmt.Sprintf("%s Laplace scale %.6g", m.Kind, a)
		if m.Kind == bound.Avg {
			s += fmt.Sprintf(" (persons) and %.6g (sum of person means in [%v, %v])", c, m.Lo, m.Hi)
		} else if m.Kind == bound.Sum {
			s += fmt.Sprintf(" (per-person per-group bounds [%v, %v])", m.Lo, m.Hi)
		}
		parts = append(parts, s)
	}
	sel := fmt.Sprintf("%d group(s) of the declared domain", len(p.spec.Domain))
	if p.spec.Domain == nil {
		sel = fmt.Sprintf("groups selected privately: a group is shown if its noisy person count exceeds %.6g (scale %.6g)", p.bp.Threshold(), p.bp.SelectScale())
	}
	rows := fmt.Sprint(p.spec.MaxRows)
	if p.spec.AutoRows {
		rows = fmt.Sprintf("auto (in [1, %d])", bound.AutoMaxRows)
	}
	auto := ""
	if p.bp.EpsAuto > 0 {
		auto = fmt.Sprintf("; automatic bounds: ε = %.6g per selection (quantile %.6g of the per-person per-group contributions, report-noisy-max scale %.6g), the release the rest", p.bp.EpsAuto, p.bp.AutoQuantile(), p.bp.AutoScale())
	}
	return fmt.Sprintf("unit %s, ε = %v, δ = %v, max_groups_contributed = %d, max_rows_contributed_per_group = %s%s; %s; %s",
		p.Unit, p.spec.Epsilon, p.spec.Delta, p.spec.MaxGroups, rows, auto, sel, strings.Join(parts, "; "))
}

// DescribeRelease is Describe with the bounds and scales a release used
// (the privately chosen ones, a DP output, when the query asked for auto).
func (p *Plan) DescribeRelease(r *bound.Result) string {
	if r == nil || !r.Auto || len(r.Bounds) != len(p.spec.Measures) {
		return p.Describe()
	}
	var parts []string
	for i, m := range p.spec.Measures {
		if m.Auto {
			parts = append(parts, fmt.Sprintf("%s bounds [%v, %v] (scale %.6g)", m.Kind, r.Bounds[i][0], r.Bounds[i][1], r.Scales[i][0]))
		}
	}
	if p.spec.AutoRows && len(r.Scales) > 0 {
		for i, m := range p.spec.Measures {
			if m.Kind == bound.Count {
				parts = append([]string{fmt.Sprintf("max_rows_contributed_per_group = %d (COUNT scale %.6g)", r.MaxRows, r.Scales[i][0])}, parts...)
				break
			}
		}
	}
	return p.Describe() + "; chosen privately: " + strings.Join(parts, ", ")
}

// noteMaxRows records table key's declared maximum row count, if any.
func (p *Plan) noteMaxRows(key string, e catalog.Table) {
	if e.MaxRows <= 0 {
		return
	}
	if p.maxRows == nil {
		p.maxRows = map[string]int64{}
	}
	p.maxRows[key] = e.MaxRows
}
