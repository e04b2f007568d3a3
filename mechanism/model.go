package mechanism

import (
	"fmt"
	"math"
)

// Model kinds. Every kind is predicted by one of three shapes: a linear
// scorer (argmax_k ⟨W_k, φ(x)⟩, or the sign for one binary vector), a
// regression (one vector, label mapped back from [−1, 1]), or a quadratic
// scorer (argmin_c x̃ᵀΦ_c x̃ on the scaled row with its intercept).
const (
	KindSVM    = "svm"
	KindLSQ    = "lsq"
	KindLMGC   = "lmgc"
	KindLDA    = "lda"    // linear scorer
	KindQDA    = "qda"    // quadratic scorer
	KindGNB    = "gnb"    // quadratic scorer (diagonal Φ_c)
	KindLogReg = "logreg" // linear scorer
	KindLinReg = "linreg" // regression
)

// IsRegression reports whether a kind predicts a number (not a class).
func IsRegression(kind string) bool { return kind == KindLSQ || kind == KindLinReg }

// Model is a released model: every field is either public (catalog bounds,
// label domain, hyperparameters, data-independent random features) or a DP
// output (weights, Φ matrices). It is safe to show to analysts.
type Model struct {
	Kind     string   `json:"kind"`
	Kernel   string   `json:"kernel"` // linear, rbf, laplacian, cauchy
	Label    string   `json:"label"`
	Features []string `json:"features"`
	// Inputs, when set, are the raw input columns and their public encoding
	// (categorical columns, missing indicators): Features are then the
	// encoded coordinates and PredictRaw takes one raw value per input.
	Inputs []Input `json:"inputs,omitempty"`
	// Classes is the public label domain in declared order (classifiers).
	// Binary SVM: Classes[0] ↦ −1, Classes[1] ↦ +1.
	Classes []string `json:"classes,omitempty"`
	// LabelLo, LabelHi are the public bounds of a regression label. Labels
	// are mapped to y' = (y − mid)/half ∈ [−1, 1] (so M = 1) for training.
	LabelLo float64 `json:"label_lo,omitempty"`
	LabelHi float64 `json:"label_hi,omitempty"`
	// LabelTransform is the public transform declared on a regression
	// label (CALL dp_transform): the model is fitted, and LabelLo, LabelHi
	// declared, on the transformed scale; Predict maps back to the raw one.
	LabelTransform string `json:"label_transform,omitempty"`
	Scaler         Scaler `json:"scaler"`
	RFF            *RFF   `json:"rff,omitempty"`
	// Weights: SVM one vector (binary) or one per class (one-vs-rest);
	// LSQ one vector. Each has the dimension of the feature map.
	Weights [][]float64 `json:"weights,omitempty"`
	// Phi: LMGC, one (D×D) matrix per class in row-major order, D = Scaler.Dim().
	Phi [][]float64 `json:"phi,omitempty"`
	// Params records hyperparameters and the privacy parameters used.
	Params map[string]float64 `json:"params,omitempty"`
}

// Prediction is a model output: a class label or a regression value.
type Prediction struct {
	Class   string
	Value   float64
	IsClass bool
}

// featureMap returns φ(x) for a raw feature row (into s's buffers when s
// is not nil, allocated otherwise).
func (m *Model) featureMap(x []float64, s *predictScratch) []float64 {
	if s == nil {
		s = &predictScratch{}
	}
	s.z = m.Scaler.Transform(s.z, x)
	if m.RFF != nil {
		s.phi = m.RFF.Map(s.phi, s.z)
		return s.phi
	}
	return s.z
}

// predictScratch holds one goroutine's buffers for repeated predictions
// (Correct scores every training row; a row's φ is not kept).
type predictScratch struct {
	z, phi []float64
}

// RawInputs lists the raw input columns in the order PredictRaw (and
// DP_PREDICT) takes them: Inputs, or every feature as a numeric input.
func (m *Model) RawInputs() []Input {
	if len(m.Inputs) > 0 {
		return m.Inputs
	}
	out := make([]Input, len(m.Features))
	for j, f := range m.Features {
		out[j] = Input{Column: f, Encoding: EncodeNumeric}
		if j < len(m.Scaler.Lo) {
			out[j].Lo, out[j].Hi, out[j].Transform = m.Scaler.Lo[j], m.Scaler.Hi[j], m.Scaler.transform(j)
		}
	}
	return out
}

// Encoder returns the model's encoder (nil for a model without Inputs).
func (m *Model) Encoder() (*Encoder, error) {
	if len(m.Inputs) == 0 {
		return nil, nil
	}
	enc, err := NewEncoder(m.Inputs)
	if err != nil {
		return nil, err
	}
	if enc.Dim() != len(m.Features) {
		return nil, fmt.Errorf("model encodes %d inputs to %d coordinates, has %d features", len(m.Inputs), enc.Dim(), len(m.Features))
	}
	return enc, nil
}

// PredictRaw evaluates the model on one raw row, one value per RawInputs
// (nil for NULL), encoded by the public rule of Inputs.
func (m *Model) PredictRaw(enc *Encoder, raw []any) (Prediction, error) {
	if enc == nil {
		x := make([]float64, len(raw))
		for j, v := range raw {
			f, ok := NumberOf(v)
			if !ok {
				f = math.NaN()
			}
			x[j] = f
		}
		return m.Predict(x)
	}
	if len(raw) != len(enc.Inputs) {
		return Prediction{}, fmt.Errorf("model expects %d inputs, got %d", len(enc.Inputs), len(raw))
	}
	return m.Predict(enc.Encode(nil, raw))
}

// Predict evaluates the model on one raw feature row (in Features order).
func (m *Model) Predict(x []float64) (Prediction, error) {
	p, _, err := m.predict(x, nil)
	return p, err
}

// predict is Predict that also returns the class index (−1 for a
// regression value) and reuses s's buffers (nil: allocate).
func (m *Model) predict(x []float64, s *predictScratch) (Prediction, int, error) {
	if len(x) != len(m.Features) {
		return Prediction{}, -1, fmt.Errorf("model expects %d features, got %d", len(m.Features), len(x))
	}
	switch m.Kind {
	case KindPrior:
		if len(m.Weights) != 1 || len(m.Weights[0]) != len(m.Classes) {
			return Prediction{}, -1, fmt.Errorf("prior model has %d weight vectors for %d classes", len(m.Weights), len(m.Classes))
		}
		a := argmax(m.Weights[0])
		return Prediction{Class: m.Classes[a], IsClass: true}, a, nil
	case KindSVM, KindLDA, KindLogReg:
		phi := m.featureMap(x, s)
		if len(m.Weights) == 1 && len(m.Classes) == 2 {
			if dot(m.Weights[0], phi) >= 0 {
				return Prediction{Class: m.Classes[1], IsClass: true}, 1, nil
			}
			return Prediction{Class: m.Classes[0], IsClass: true}, 0, nil
		}
		if len(m.Weights) != len(m.Classes) {
			return Prediction{}, -1, fmt.Errorf("%s model has %d weight vectors for %d classes", m.Kind, len(m.Weights), len(m.Classes))
		}
		best, arg := math.Inf(-1), 0
		for k, w := range m.Weights {
			if sc := dot(w, phi); sc > best {
				best, arg = sc, k
			}
		}
		return Prediction{Class: m.Classes[arg], IsClass: true}, arg, nil
	case KindLSQ, KindLinReg:
		if len(m.Weights) != 1 {
			return Prediction{}, -1, fmt.Errorf("%s model has %d weight vectors, want 1", m.Kind, len(m.Weights))
		}
		y := Clip(dot(m.Weights[0], m.featureMap(x, s)), -1, 1)
		mid, half := (m.LabelLo+m.LabelHi)/2, (m.LabelHi-m.LabelLo)/2
		return Prediction{Value: InverseTransform(m.LabelTransform, mid+half*y)}, -1, nil
	case KindLMGC, KindQDA, KindGNB:
		if s == nil {
			s = &predictScratch{}
		}
		z := m.Scaler.Transform(s.z, x)
		s.z = z
		D := len(z)
		if len(m.Phi) != len(m.Classes) {
			return Prediction{}, -1, fmt.Errorf("%s model has %d matrices for %d classes", m.Kind, len(m.Phi), len(m.Classes))
		}
		best, arg := math.Inf(1), 0
		for c, phi := range m.Phi {
			if len(phi) != D*D {
				return Prediction{}, -1, fmt.Errorf("%s matrix %d has %d entries, want %d", m.Kind, c, len(phi), D*D)
			}
			if q := quadForm(phi, z); q < best {
				best, arg = q, c
			}
		}
		return Prediction{Class: m.Classes[arg], IsClass: true}, arg, nil
	}
	return Prediction{}, -1, fmt.Errorf("unknown model kind %q", m.Kind)
}

// QuadraticForm returns x̃ᵀΦ_c x̃ (x̃ = Scaler(x)) for class index c of a
// quadratic-scorer model (kinds lmgc, qda, gnb; Predict takes the argmin
// over c). It is for audits and diagnostics; shapes are the caller's.
func (m *Model) QuadraticForm(c int, x []float64) float64 {
	return quadForm(m.Phi[c], m.Scaler.Transform(nil, x))
}

// quadForm returns zᵀΦz for Φ row-major len(z)×len(z).
func quadForm(phi, z []float64) float64 {
	D := len(z)
	var q float64
	for i := 0; i < D; i++ {
		var r float64
		for j := 0; j < D; j++ {
			r += phi[i*D+j] * z[j]
		}
		q += z[i] * r
	}
	return q
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
