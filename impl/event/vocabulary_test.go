package event

import (
	"errors"
	"strings"
	"testing"
)

// TestNewVocabularyRefusals: every way a spec can be wrong, each beside
// the look-alike that is right, refused by its whole shape (code, no seq,
// no index, the type named); the specs kept are copies (a caller changing
// its slice later changes nothing), a registered type is checked by its
// fields, and the nil vocabulary is the catalog alone.
func TestNewVocabularyRefusals(t *testing.T) {
	str := FieldSpec{Name: "s", Kind: KindString}
	for _, c := range []struct {
		name  string
		specs []TypeSpec
		bad   string // "" when the specs are accepted; else a part of the detail
	}{
		{"plain", []TypeSpec{{Type: "x/a", Fields: []FieldSpec{str}}}, ""},
		{"no fields", []TypeSpec{{Type: "x/a"}}, ""},
		{"empty name", []TypeSpec{{Type: ""}}, "non-empty"},
		{"leading space", []TypeSpec{{Type: " x/a"}}, "surrounding space"},
		{"trailing tab", []TypeSpec{{Type: "x/a\t"}}, "surrounding space"},
		{"inner space", []TypeSpec{{Type: "x a"}}, ""},
		{"a catalog type", []TypeSpec{{Type: TypeUserMessage}}, "in the catalog"},
		{"twice", []TypeSpec{{Type: "x/a"}, {Type: "x/a"}}, "registered twice"},
		{"two types", []TypeSpec{{Type: "x/a"}, {Type: "x/b"}}, ""},
		{"surface-eligible", []TypeSpec{{Type: "x/a", Surface: true}}, "surface-eligible"},
		{"empty field name", []TypeSpec{{Type: "x/a", Fields: []FieldSpec{{Kind: KindString}}}}, `field ""`},
		{"repeated field", []TypeSpec{{Type: "x/a", Fields: []FieldSpec{str, str}}}, `field "s"`},
		{"two fields", []TypeSpec{{Type: "x/a", Fields: []FieldSpec{str, {Name: "t", Kind: KindInteger}}}}, ""},
		{"last kind", []TypeSpec{{Type: "x/a", Fields: []FieldSpec{{Name: "k", Kind: KindTagged}}}}, ""},
		{"kind past the last", []TypeSpec{{Type: "x/a", Fields: []FieldSpec{{Name: "k", Kind: KindTagged + 1}}}}, `field "k"`},
		{"enum on a string", []TypeSpec{{Type: "x/a", Fields: []FieldSpec{{Name: "e", Kind: KindString, Enum: []string{"a"}}}}}, ""},
		{"enum on an integer", []TypeSpec{{Type: "x/a", Fields: []FieldSpec{{Name: "e", Kind: KindInteger, Enum: []string{"1"}}}}}, `field "e"`},
		{"same field in two types", []TypeSpec{{Type: "x/a", Fields: []FieldSpec{str}}, {Type: "x/b", Fields: []FieldSpec{str}}}, ""},
	} {
		v, err := NewVocabulary(c.specs...)
		if c.bad == "" {
			if err != nil || v == nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		var ee *Error
		if v != nil || !errors.As(err, &ee) || ee.Code != CodeVocabularyInvalid || ee.Seq != -1 || ee.Index != -1 || !strings.Contains(ee.Detail, c.bad) {
			t.Errorf("%s: %v, %+v; want %s with seq and index -1 saying %q", c.name, v, err, CodeVocabularyInvalid, c.bad)
		}
	}

	fields := []FieldSpec{{Name: "n", Kind: KindInteger, Required: true}}
	v, err := NewVocabulary(TypeSpec{Type: "x/counter", Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	fields[0].Kind = KindString // the caller's slice, changed after
	ok := Event{Type: "x/counter", Data: []byte(`{"n":1}`)}
	bad := Event{Type: "x/counter", Data: []byte(`{"n":"1"}`)}
	if err := v.Check(&ok, 0); err != nil {
		t.Errorf("a registered type's good data: %v", err)
	}
	if err := v.Check(&bad, 0); CodeOf(err) != CodeDataInvalid {
		t.Errorf("a registered type's bad data: %v", err)
	}
	if !v.Known("x/counter") || !v.Known(TypeUserMessage) || v.Known("x/other") {
		t.Error("Known of a registered, a catalog and an unknown type")
	}
	var none *Vocabulary
	if none.Known("x/counter") || !none.Known(TypeUserMessage) || none.Registered() != nil {
		t.Error("the nil vocabulary is the catalog alone")
	}
	if r := v.Registered(); len(r) != 1 || r[0].Type != "x/counter" {
		t.Errorf("Registered: %+v", r)
	}
	if err := none.Check(&ok, 0); CodeOf(err) != CodeUnknownType {
		t.Errorf("x/counter without its vocabulary: %v", err)
	}
}
