package event

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// numberLiterals are number literals and look-alikes around the integer
// fast path's edges: 14 to 17 digits, a minus, zeros, fractions and
// exponents that spell an integer (1.0, 1e2) or do not (1.5, 1e-1), the
// largest exact integers and one past them, and random literals made of
// digits, signs, points and exponents (valid or not).
func numberLiterals() []string {
	lits := []string{
		"0", "-0", "7", "-7", "00", "-", "", "1.0", "1.5", "-0.5", "1e2", "1E2", "1e-1", "1e400", "-1e400",
		"123456789012345", "-123456789012345", "1234567890123456", "-1234567890123456",
		"9007199254740991", "9007199254740992", "9007199254740993", "99999999999999999999",
		"999999999999999", "1000000000000000", "100000000000000.0", "1.", ".5", "1x", "--1", "+1",
	}
	r := rand.New(rand.NewPCG(3, 5))
	alphabet := []string{"0", "1", "5", "9", "-", ".", "e", "E", "+"}
	for range 20000 {
		var b strings.Builder
		if r.IntN(3) == 0 {
			b.WriteByte('-')
		}
		b.WriteByte(byte('1' + r.IntN(9)))
		for range r.IntN(19) {
			if r.IntN(12) == 0 {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			} else {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
		}
		lits = append(lits, b.String())
	}
	return lits
}

// TestIntegerFieldAsParseFloat holds kindProblem's answer for an integer
// field, which reads short digit strings without ParseFloat, against the
// reading it stands for: a number whose float64 value is whole.
func TestIntegerFieldAsParseFloat(t *testing.T) {
	f := &FieldSpec{Name: "n", Kind: KindInteger}
	fast := 0
	for _, lit := range numberLiterals() {
		if lit == "" {
			continue // kindProblem reads a value: never empty
		}
		want := ""
		if lit[0] != '-' && (lit[0] < '0' || lit[0] > '9') {
			want = "is not a number"
		} else if x, err := strconv.ParseFloat(lit, 64); err != nil || x != math.Trunc(x) {
			want = "is not an integer"
		}
		if got := kindProblem(f, []byte(lit)); got != want {
			t.Errorf("%q: kindProblem says %q, the float reading %q", lit, got, want)
		}
		if shortDigits([]byte(lit)) {
			fast++
		}
	}
	if fast < 1000 {
		t.Fatalf("only %d literals took the fast path", fast)
	}
}

// TestCheckShapeInAnyOrder holds checkShape, whose member search starts
// after the last member found, against a lookup by name: for every type
// of the catalog, objects holding a random choice of its fields (each with
// a value of its kind, of another kind, or null) and of look-alike names
// (a field's name with a letter more, or another case), in random order.
func TestCheckShapeInAnyOrder(t *testing.T) {
	values := []string{`1`, `-2`, `1.5`, `"s"`, `"message"`, `true`, `null`, `[]`, `[{"type":"text"}]`, `[1]`, `{}`, `{"kind":"user"}`}
	r := rand.New(rand.NewPCG(19, 23))
	differs := 0
	for _, spec := range catalog {
		for range 300 {
			var names []string
			for _, f := range spec.Fields {
				if r.IntN(4) != 0 {
					names = append(names, f.Name)
				}
				switch r.IntN(6) {
				case 0:
					names = append(names, f.Name+"s")
				case 1:
					names = append(names, strings.ToUpper(f.Name[:1])+f.Name[1:])
				}
			}
			r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
			var b strings.Builder
			b.WriteByte('{')
			byName := map[string]string{}
			for k, n := range names {
				if k > 0 {
					b.WriteByte(',')
				}
				v := values[r.IntN(len(values))]
				byName[n] = v
				b.WriteString(strconv.Quote(n) + ":" + v)
			}
			b.WriteByte('}')
			compact, members, why := compactData([]byte(b.String()))
			if why != "" {
				t.Fatalf("%s: %s", b.String(), why)
			}
			want := ""
			for i := range spec.Fields {
				f := &spec.Fields[i]
				v, ok := byName[f.Name]
				if !ok {
					if f.Required {
						want = "missing required field " + strconv.Quote(f.Name)
						break
					}
					continue
				}
				if p := kindProblem(f, []byte(v)); p != "" {
					want = "field " + strconv.Quote(f.Name) + " " + p
					break
				}
			}
			if got := checkShape(&spec, compact, members); got != want {
				t.Fatalf("%s %s: checkShape says %q, a lookup by name %q", spec.Type, b.String(), got, want)
			}
			if want != "" {
				differs++
			}
		}
	}
	if differs < 100 {
		t.Fatalf("only %d objects broke a rule", differs)
	}
}

// TestCatalogIndex holds catalogIndex, a hash table without a map,
// against a map of the catalog: every type is found at its index, and
// look-alikes (each type with one byte changed, cut short, made longer,
// in upper case, another type's halves joined) are found exactly when the
// map finds them.
func TestCatalogIndex(t *testing.T) {
	byType := map[Type]int{}
	for i := range catalog {
		byType[catalog[i].Type] = i
	}
	check := func(tt Type) {
		t.Helper()
		gi, gok := catalogIndex(tt)
		wi, wok := byType[tt]
		if gok != wok || gi != wi && wok {
			t.Fatalf("catalogIndex(%q) = %d, %v; the map says %d, %v", tt, gi, gok, wi, wok)
		}
	}
	check("")
	for i := range catalog {
		ty := string(catalog[i].Type)
		check(Type(ty))
		check(Type(ty[:len(ty)-1]))
		check(Type(ty + "s"))
		check(Type(strings.ToUpper(ty)))
		for j := range catalog {
			o := string(catalog[j].Type)
			check(Type(ty[:len(ty)/2] + o[len(o)/2:]))
		}
		for k := range len(ty) {
			for _, c := range []byte{0, '/', 'a', 'e', 's', 0xff} {
				b := []byte(ty)
				b[k] = c
				check(Type(b))
			}
		}
	}
}
