package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Set families (one table each on the page).
const (
	famSharedCls = "shared-classification"
	famSharedReg = "shared-regression"
	famSynCls    = "synthetic-classification"
	famSynReg    = "synthetic-regression"
	famExtCls    = "external-classification"
	famExtReg    = "external-regression"
)

// splitSeed is the public seed of every 80/20 split (mixed with the set
// name so that sets do not share a permutation).
const splitSeed = 12345

// dataset is one benchmark set: its public declaration (bounds, label
// domain or label bounds) and a fixed train/test split.
type dataset struct {
	name, family string
	classify     bool
	features     []string
	lo, hi       []float64
	label        string
	classes      []string // declared label domain (classification)
	labelLo      float64  // declared label bounds (regression)
	labelHi      float64
	trainX       [][]float64
	testX        [][]float64
	trainC       []string // class labels (classification)
	testC        []string
	trainY       []float64 // numeric labels (regression)
	testY        []float64
	declared     string // how the bounds were declared (for the page)
	rows         int    // training rows (n, public)
}

func (d *dataset) n() int   { return d.rows }
func (d *dataset) dim() int { return len(d.features) }

// sharedSets are the shared/ data sets: name → classification?
var sharedSets = []struct {
	name     string
	classify bool
}{
	{"iris", true}, {"wine", true}, {"breast_cancer", true}, {"vehicle", true}, {"vowel", true},
	{"digits", true}, {"dna", true}, {"ticdata", true}, {"diabetes", false},
}

// Synthetic grids (the n, d, K).
var (
	synN = []int{1000, 10000, 100000}
	synD = []int{10, 50}
	synK = []int{2, 5, 20}
)

// allSetNames lists every set in run order: cheap ones first.
func allSetNames() []string {
	var out []string
	for _, s := range sharedSets {
		out = append(out, s.name)
	}
	for _, n := range synN {
		for _, d := range synD {
			out = append(out, synRegName(n, d))
			for _, k := range synK {
				out = append(out, synClsName(n, d, k))
			}
		}
	}
	return out
}

func synClsName(n, d, k int) string { return fmt.Sprintf("syn_c_n%d_d%d_k%d", n, d, k) }
func synRegName(n, d int) string    { return fmt.Sprintf("syn_r_n%d_d%d", n, d) }

// extDir is the -ext directory: NAME.csv files declared in its
// catalog.json (the format of testdata/demo_catalog.json) are sets "ext:NAME".
var extDir string

// loadSet builds the named set.
func loadSet(name, dataDir, repo string) (*dataset, error) {
	if ext, ok := strings.CutPrefix(name, "ext:"); ok {
		if extDir == "" {
			return nil, fmt.Errorf("set %q needs -ext DIR", name)
		}
		return loadCSVSet(ext, true, extDir, filepath.Join(extDir, "catalog.json"))
	}
	var n, d, k int
	if c, _ := fmt.Sscanf(name, "syn_c_n%d_d%d_k%d", &n, &d, &k); c == 3 {
		return synClassification(name, n, d, k), nil
	}
	if c, _ := fmt.Sscanf(name, "syn_r_n%d_d%d", &n, &d); c == 2 {
		return synRegression(name, n, d), nil
	}
	for _, s := range sharedSets {
		if s.name == name {
			return loadShared(name, s.classify, dataDir, repo)
		}
	}
	return nil, fmt.Errorf("unknown set %q", name)
}

// demoCatalog is testdata/demo_catalog.json: the project's declared public
// bounds and label domains of the five sklearn sets.
type demoCatalog map[string]struct {
	Bounds map[string][2]float64 `json:"bounds"`
	Label  *struct {
		Column string   `json:"column"`
		Domain []string `json:"domain"`
	} `json:"label"`
}

// Owner declarations for the shared/ sets the demo catalog does not cover,
// the same as docs/results/gauss.md: domain knowledge where it exists,
// otherwise an explicit owner assumption (never computed at query time).
var vehicleHi = []float64{150, 100, 150, 400, 200, 100, 300, 100, 50, 250, 400, 1200, 300, 200, 50, 50, 250, 250}

var declaredClasses = map[string][]string{
	"dna":     {"ei", "ie", "n"},
	"vowel":   {"hid", "hId", "hEd", "hAd", "hYd", "had", "hOd", "hod", "hUd", "hud", "hed"},
	"vehicle": {"bus", "opel", "saab", "van"},
	"ticdata": {"noinsurance", "insurance"},
}

var declaredNote = map[string]string{
	"dna":     "binary indicators: [0, 1] (domain)",
	"vowel":   "v1 speaker code [0, 14] (the file's 15 codes), v2–v10 [−6, 6] (README: about −6 to 6)",
	"vehicle": "owner assumption [0, H], H a round number 1–2.5× above each column's maximum (no documented maxima; the only data-informed bounds)",
	"ticdata": "CoIL 2000 dictionary: MOSTYPE 1–41, MAANTHUI 1–10, MGEMOMV/MGEMLEEF 1–6, other M*/P* levels 1–10; A* policy counts 0–12 (owner assumption)",
}

func ownerBound(name, f string, j int) (float64, float64) {
	switch name {
	case "dna":
		return 0, 1
	case "vowel":
		if f == "v1" {
			return 0, 14
		}
		return -6, 6
	case "vehicle":
		return 0, vehicleHi[j]
	case "ticdata":
		switch {
		case f == "stype":
			return 1, 41
		case f == "maanthui":
			return 1, 10
		case f == "mgemomv" || f == "mgemleef":
			return 1, 6
		case strings.HasPrefix(f, "a"):
			return 0, 12
		}
		return 1, 10
	}
	return 0, 0
}

func readCSV(path string) (header []string, rows [][]string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(recs) < 2 {
		return nil, nil, fmt.Errorf("%s: no rows", path)
	}
	return recs[0], recs[1:], nil
}

func loadShared(name string, classify bool, dataDir, repo string) (*dataset, error) {
	ds, err := loadCSVSet(name, classify, dataDir, filepath.Join(repo, "testdata", "demo_catalog.json"))
	if err == nil && strings.HasPrefix(ds.declared, repo) {
		// The page names the catalog as the repository does, whatever
		// -repo the tool was started with.
		ds.declared = "testdata/demo_catalog.json"
	}
	return ds, err
}

// loadCSVSet reads dataDir/name.csv (header row, label last) and its
// declaration from the catalog file, or from the owner declarations above
// for shared/ sets the catalog does not cover. An external set is a
// classification set when its catalog entry has a label domain.
func loadCSVSet(name string, classify bool, dataDir, catalog string) (*dataset, error) {
	header, rows, err := readCSV(filepath.Join(dataDir, name+".csv"))
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(catalog)
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	var dc demoCatalog
	if err := json.Unmarshal(raw, &dc); err != nil {
		return nil, fmt.Errorf("decode catalog %s: %w", catalog, err)
	}
	ext := dataDir == extDir && extDir != ""
	if ext {
		spec, ok := dc[name]
		if !ok {
			return nil, fmt.Errorf("%s: no entry in %s", name, catalog)
		}
		classify = spec.Label != nil
	}
	ds := &dataset{name: name, family: famSharedReg, classify: classify}
	switch {
	case ext && classify:
		ds.family, ds.name = famExtCls, "ext_"+name
	case ext:
		ds.family, ds.name = famExtReg, "ext_"+name
	case classify:
		ds.family = famSharedCls
	}
	ds.features, ds.label = header[:len(header)-1], header[len(header)-1]
	if spec, ok := dc[name]; ok {
		ds.declared = catalog
		for _, f := range ds.features {
			b, ok := spec.Bounds[f]
			if !ok {
				return nil, fmt.Errorf("%s: demo catalog has no bounds for %s", name, f)
			}
			ds.lo, ds.hi = append(ds.lo, b[0]), append(ds.hi, b[1])
		}
		if classify {
			ds.classes = spec.Label.Domain
		} else {
			b, ok := spec.Bounds[ds.label]
			if !ok {
				return nil, fmt.Errorf("%s: demo catalog has no bounds for the label %s", name, ds.label)
			}
			ds.labelLo, ds.labelHi = b[0], b[1]
		}
	} else {
		ds.declared = declaredNote[name]
		for j, f := range ds.features {
			lo, hi := ownerBound(name, f, j)
			ds.lo, ds.hi = append(ds.lo, lo), append(ds.hi, hi)
		}
		ds.classes = declaredClasses[name]
	}
	p := newRNG(splitSeed ^ seedOf(ds.name)).perm(len(rows))
	cut := len(rows) * 8 / 10
	for i, idx := range p {
		r := rows[idx]
		x := make([]float64, len(ds.features))
		for j := range x {
			if x[j], err = strconv.ParseFloat(r[j], 64); err != nil {
				return nil, fmt.Errorf("%s row %d: %w", name, idx, err)
			}
		}
		lab := r[len(r)-1]
		train := i < cut
		if train {
			ds.trainX = append(ds.trainX, x)
		} else {
			ds.testX = append(ds.testX, x)
		}
		if classify {
			if train {
				ds.trainC = append(ds.trainC, lab)
			} else {
				ds.testC = append(ds.testC, lab)
			}
			continue
		}
		y, err := strconv.ParseFloat(lab, 64)
		if err != nil {
			return nil, fmt.Errorf("%s row %d label: %w", name, idx, err)
		}
		if train {
			ds.trainY = append(ds.trainY, y)
		} else {
			ds.testY = append(ds.testY, y)
		}
	}
	ds.rows = len(ds.trainX)
	return ds, nil
}

// Synthetic data: a three-factor model with heteroscedastic noise, so the
// features are correlated like real measurements.
//
//	x = μ_y + L·f + e,  f ~ N(0, I₃), L_ja ~ N(0, 0.5²), e_j ~ N(0, σ_j²),
//	σ_j log-uniform in [0.5, 1].
//
// Classification: K class means in random directions, scaled so that the
// median pairwise Mahalanobis distance is Δ(K) = 2·Φ⁻¹(1 − 0.08/(K−1))
// (the union bound puts the Bayes error near 8 % at every K); class
// probabilities ∝ exp(0.3·N(0, 1)); then 5 % of the labels are replaced by
// a uniformly random class (label noise). Regression: y = xᵀβ + N(0, 0.5²)
// with Var(xᵀβ) = 1 (R² ≈ 0.8), and 2 % of the labels replaced by a uniform
// draw in the label bounds (outliers).
//
// Declared bounds (the owner's): features [−5, 5], regression label [−4, 4];
// values outside are winsorised to them before the table is written (the
// owner's clipping, about 0.1 % of values). n is the training rows (the
// protected table); the test split has n/4 rows, at most 10⁴.
const (
	synFactors    = 3
	synFeatureBox = 5.0
	synLabelBox   = 4.0
	synLabelNoise = 0.05
	synOutliers   = 0.02
	synBayesError = 0.08
)

type synModel struct {
	load  [][]float64 // d × factors
	sigma []float64
}

func newSynModel(r *rng, d int) synModel {
	m := synModel{load: make([][]float64, d), sigma: make([]float64, d)}
	for j := 0; j < d; j++ {
		m.load[j] = make([]float64, synFactors)
		for a := range m.load[j] {
			m.load[j][a] = 0.5 * r.norm()
		}
		m.sigma[j] = math.Exp(math.Log(0.5) + r.float64()*(math.Log(1)-math.Log(0.5)))
	}
	return m
}

// cov returns Σ = L Lᵀ + diag(σ²).
func (m synModel) cov() [][]float64 {
	d := len(m.sigma)
	s := make([][]float64, d)
	for i := range s {
		s[i] = make([]float64, d)
		for j := range s[i] {
			for a := 0; a < synFactors; a++ {
				s[i][j] += m.load[i][a] * m.load[j][a]
			}
		}
		s[i][i] += m.sigma[i] * m.sigma[i]
	}
	return s
}

// draw returns mean + L·f + e.
func (m synModel) draw(r *rng, mean []float64) []float64 {
	var f [synFactors]float64
	for a := range f {
		f[a] = r.norm()
	}
	x := make([]float64, len(m.sigma))
	for j := range x {
		v := m.sigma[j] * r.norm()
		if mean != nil {
			v += mean[j]
		}
		for a := range f {
			v += m.load[j][a] * f[a]
		}
		x[j] = clip(v, -synFeatureBox, synFeatureBox)
	}
	return x
}

func clip(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// cholesky returns the lower factor of a symmetric positive definite a.
func cholesky(a [][]float64) [][]float64 {
	n := len(a)
	l := make([][]float64, n)
	for i := range l {
		l[i] = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s := a[i][j]
			for k := 0; k < j; k++ {
				s -= l[i][k] * l[j][k]
			}
			if i == j {
				l[i][i] = math.Sqrt(s)
			} else {
				l[i][j] = s / l[j][j]
			}
		}
	}
	return l
}

// mahalanobis returns √(vᵀ Σ⁻¹ v) with Σ = l lᵀ.
func mahalanobis(l [][]float64, v []float64) float64 {
	z := make([]float64, len(v))
	var s float64
	for i := range v {
		t := v[i]
		for k := 0; k < i; k++ {
			t -= l[i][k] * z[k]
		}
		z[i] = t / l[i][i]
		s += z[i] * z[i]
	}
	return math.Sqrt(s)
}

func synSplitSizes(n int) (train, test int) { return n, min(n/4, 10000) }

func synFeatures(d int) (names []string, lo, hi []float64) {
	for j := 0; j < d; j++ {
		names = append(names, "x"+strconv.Itoa(j+1))
		lo, hi = append(lo, -synFeatureBox), append(hi, synFeatureBox)
	}
	return names, lo, hi
}

func synClassification(name string, n, d, k int) *dataset {
	// The problem (means, loadings) depends on (d, K) only, so the three n
	// share it; the rows depend on n too.
	pr := newRNG(seedOf(fmt.Sprintf("syn_c_d%d_k%d", d, k)))
	m := newSynModel(pr, d)
	mu := make([][]float64, k)
	for c := range mu {
		mu[c] = make([]float64, d)
		for j := range mu[c] {
			mu[c][j] = pr.norm()
		}
	}
	l := cholesky(m.cov())
	var dist []float64
	diff := make([]float64, d)
	for a := 0; a < k; a++ {
		for b := a + 1; b < k; b++ {
			for j := range diff {
				diff[j] = mu[a][j] - mu[b][j]
			}
			dist = append(dist, mahalanobis(l, diff))
		}
	}
	sort.Float64s(dist)
	med := dist[len(dist)/2]
	if len(dist)%2 == 0 {
		med = (dist[len(dist)/2-1] + dist[len(dist)/2]) / 2
	}
	target := 2 * math.Sqrt2 * math.Erfinv(2*(1-synBayesError/float64(k-1))-1)
	for c := range mu {
		for j := range mu[c] {
			mu[c][j] *= target / med
		}
	}
	w := make([]float64, k)
	var tot float64
	for c := range w {
		w[c] = math.Exp(0.3 * pr.norm())
		tot += w[c]
	}
	ds := &dataset{name: name, family: famSynCls, classify: true, label: "y",
		declared: "synthetic: features [−5, 5] (owner's declaration; values winsorised to it)"}
	ds.features, ds.lo, ds.hi = synFeatures(d)
	for c := 0; c < k; c++ {
		ds.classes = append(ds.classes, "c"+strconv.Itoa(c))
	}
	r := newRNG(seedOf(name))
	ntr, nte := synSplitSizes(n)
	for i := 0; i < ntr+nte; i++ {
		u, c := r.float64()*tot, 0
		for c < k-1 && u >= w[c] {
			u -= w[c]
			c++
		}
		x := m.draw(r, mu[c])
		if r.float64() < synLabelNoise {
			c = r.intN(k)
		}
		if i < ntr {
			ds.trainX, ds.trainC = append(ds.trainX, x), append(ds.trainC, ds.classes[c])
		} else {
			ds.testX, ds.testC = append(ds.testX, x), append(ds.testC, ds.classes[c])
		}
	}
	ds.rows = len(ds.trainX)
	return ds
}

func synRegression(name string, n, d int) *dataset {
	pr := newRNG(seedOf(fmt.Sprintf("syn_r_d%d", d)))
	m := newSynModel(pr, d)
	beta := make([]float64, d)
	for j := range beta {
		beta[j] = pr.norm()
	}
	s := m.cov()
	var v float64
	for i := range beta {
		for j := range beta {
			v += beta[i] * s[i][j] * beta[j]
		}
	}
	for j := range beta {
		beta[j] /= math.Sqrt(v)
	}
	ds := &dataset{name: name, family: famSynReg, label: "y", labelLo: -synLabelBox, labelHi: synLabelBox,
		declared: "synthetic: features [−5, 5], label [−4, 4] (owner's declaration; values winsorised to it)"}
	ds.features, ds.lo, ds.hi = synFeatures(d)
	r := newRNG(seedOf(name))
	ntr, nte := synSplitSizes(n)
	for i := 0; i < ntr+nte; i++ {
		x := m.draw(r, nil)
		var y float64
		for j := range x {
			y += beta[j] * x[j]
		}
		y += 0.5 * r.norm()
		if r.float64() < synOutliers {
			y = -synLabelBox + 2*synLabelBox*r.float64()
		}
		y = clip(y, -synLabelBox, synLabelBox)
		if i < ntr {
			ds.trainX, ds.trainY = append(ds.trainX, x), append(ds.trainY, y)
		} else {
			ds.testX, ds.testY = append(ds.testX, x), append(ds.testY, y)
		}
	}
	ds.rows = len(ds.trainX)
	return ds
}

// writeSplit writes the train and test split as CSV (header: features,
// label), the files the server imports and the sklearn baselines read.
func (d *dataset) writeSplit(dir string) (train, test string, err error) {
	train, test = filepath.Join(dir, d.name+"_train.csv"), filepath.Join(dir, d.name+"_test.csv")
	if err := d.writeCSV(train, d.trainX, d.trainC, d.trainY); err != nil {
		return "", "", err
	}
	if err := d.writeCSV(test, d.testX, d.testC, d.testY); err != nil {
		return "", "", err
	}
	return train, test, nil
}

// writeCSV writes to a temporary file and renames it, so that a reader
// (the baselines script) never sees a half-written split.
func (d *dataset) writeCSV(path string, X [][]float64, c []string, y []float64) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".split-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	w := csv.NewWriter(f)
	_ = w.Write(append(append([]string(nil), d.features...), d.label))
	rec := make([]string, d.dim()+1)
	for i, x := range X {
		for j, v := range x {
			rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		if d.classify {
			rec[d.dim()] = c[i]
		} else {
			rec[d.dim()] = strconv.FormatFloat(y[i], 'g', -1, 64)
		}
		_ = w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(f.Name(), path)
}

// bounds writes the declaration as JSON for the baselines script.
func (d *dataset) meta() map[string]any {
	return map[string]any{"name": d.name, "family": d.family, "classify": d.classify, "features": d.features,
		"lo": d.lo, "hi": d.hi, "label": d.label, "classes": d.classes, "label_lo": d.labelLo, "label_hi": d.labelHi,
		"n": d.n(), "d": d.dim(), "k": len(d.classes), "n_test": len(d.testX), "declared": d.declared}
}
