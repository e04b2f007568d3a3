package functions

import (
	"math"
	"testing"

	"github.com/shopspring/decimal"
)

func TestParseOptions(t *testing.T) {
	o, err := parseOptions(" label=malignant; features = a, b ,c ;C=10;; model=m1 ")
	if err != nil {
		t.Fatal(err)
	}
	if o["label"] != "malignant" || o["c"] != "10" || o["model"] != "m1" {
		t.Fatalf("options %v", o)
	}
	if fs, _ := o.list("features"); len(fs) != 3 || fs[1] != "b" {
		t.Fatalf("features %v", fs)
	}
	for _, bad := range []string{"C", "=3", "a=1; a=2"} {
		if _, err := parseOptions(bad); err == nil {
			t.Errorf("parseOptions(%q) accepted", bad)
		}
	}
	o, _ = parseOptions("C=0; dim=-3; gamma=abc; x=1")
	if _, err := o.positive("c"); err == nil {
		t.Error("C=0 accepted")
	}
	if _, err := o.positiveInt("dim"); err == nil {
		t.Error("dim=-3 accepted")
	}
	if _, err := o.positive("gamma"); err == nil {
		t.Error("gamma=abc accepted")
	}
	if err := o.unknown(); err == nil {
		t.Error("unknown option x not reported")
	}
	for _, bad := range []string{"c=5e-324", "gamma=1e300", "c=1e-13", "h=2e12"} {
		o, _ := parseOptions(bad)
		for k := range o {
			if _, err := o.positive(k); err == nil {
				t.Errorf("%s accepted", bad)
			}
		}
	}
	if v, err := (options{"c": "1e12"}).positive("c"); err != nil || v != 1e12 {
		t.Errorf("c=1e12 refused: %v", err)
	}
	if v, err := (options{}).positive("c"); err != nil || v != 0 {
		t.Errorf("absent option: %v, %v", v, err)
	}
}

func TestArgConversions(t *testing.T) {
	args := []any{int64(2), 0.5, decimal.NewFromFloat(1.25), "x", nil, math.NaN(), []byte("name"), "  "}
	if f, err := argFloat(args, 0, "a"); err != nil || f != 2 {
		t.Errorf("int64: %v %v", f, err)
	}
	if f, err := argFloat(args, 2, "a"); err != nil || f != 1.25 {
		t.Errorf("decimal: %v %v", f, err)
	}
	for _, i := range []int{3, 4, 5} {
		if _, err := argFloat(args, i, "a"); err == nil {
			t.Errorf("argFloat(%v) accepted", args[i])
		}
	}
	if s, err := argString(args, 6, "n"); err != nil || s != "name" {
		t.Errorf("bytes: %q %v", s, err)
	}
	for _, i := range []int{0, 4, 7} {
		if _, err := argString(args, i, "n"); err == nil {
			t.Errorf("argString(%v) accepted", args[i])
		}
	}
	for _, e := range []any{0.0, -1.0, 1e-9, 2e6} {
		if _, err := argEpsilon([]any{e}, 0); err == nil {
			t.Errorf("epsilon %v accepted", e)
		}
	}
	if e, err := argEpsilon([]any{1e-5}, 0); err != nil || e != 1e-5 {
		t.Errorf("minimum epsilon refused: %v", err)
	}
}

func TestLabelString(t *testing.T) {
	for v, want := range map[any]string{int64(3): "3", 2.0: "2", 0.5: "0.5", "setosa": "setosa", int8(1): "1"} {
		if got := LabelString(v); got != want {
			t.Errorf("LabelString(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestArgNumericStrings: numbers bound as strings (PHP PDO, Perl DBI) are
// read as MySQL coerces them; anything but a whole decimal number is refused.
func TestArgNumericStrings(t *testing.T) {
	for s, want := range map[string]float64{"0.5": 0.5, " 1e-5 ": 1e-5, "+2": 2, "-0.25": -0.25, "3.": 3, ".5": 0.5} {
		for _, arg := range []any{s, []byte(s)} {
			if f, err := argFloat([]any{arg}, 0, "epsilon"); err != nil || f != want {
				t.Errorf("argFloat(%T %q) = %v, %v; want %v", arg, s, f, err, want)
			}
		}
	}
	for _, s := range []string{"", "  ", "0.5x", "x", "0x1p-2", "1_000", "NaN", "inf", "-Infinity", "1e999", "0.5 0.5"} {
		if f, err := argFloat([]any{s}, 0, "epsilon"); err == nil {
			t.Errorf("argFloat(%q) accepted as %v", s, f)
		}
	}
	if eps, err := argEpsilon([]any{"0.5"}, 0); err != nil || eps != 0.5 {
		t.Errorf("argEpsilon('0.5') = %v, %v", eps, err)
	}
	if _, err := argEpsilon([]any{"0"}, 0); err == nil {
		t.Error("argEpsilon('0') accepted")
	}
}
