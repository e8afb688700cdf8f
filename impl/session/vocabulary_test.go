package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/ops"
	"github.com/surfacelog/surface/model"
)

// TestVocabulary: SURF-3. A program registers its own log-only types for a
// session (data shape optional); registration refuses catalog types,
// duplicates and surface eligibility; an unknown type is kept only when
// marked ignorable, never on the surface, and round-trips.
func TestVocabulary(t *testing.T) {
	for name, specs := range map[string][]event.TypeSpec{
		"a catalog type":  {{Type: event.TypeTurnStart}},
		"twice":           {{Type: "app/audit"}, {Type: "app/audit"}},
		"surface":         {{Type: "app/note", Surface: true}},
		"empty name":      {{Type: ""}},
		"repeated field":  {{Type: "app/x", Fields: []event.FieldSpec{{Name: "a"}, {Name: "a"}}}},
		"enum on integer": {{Type: "app/y", Fields: []event.FieldSpec{{Name: "n", Kind: event.KindInteger, Enum: []string{"1"}}}}},
	} {
		if _, err := event.NewVocabulary(specs...); !errors.Is(err, event.CodeVocabularyInvalid) {
			t.Errorf("%s: %v, want vocabulary.invalid", name, err)
		}
	}
	voc, err := event.NewVocabulary(
		event.TypeSpec{Type: "app/audit", Fields: []event.FieldSpec{{Name: "user", Kind: event.KindString, Required: true}}},
		event.TypeSpec{Type: "app/anything"},
	)
	if err != nil {
		t.Fatal(err)
	}
	s := session.New(session.WithVocabulary(voc))
	m := model.NewSession(func() int64 { return 1 }, model.WithVocabulary(voc))
	steps := []struct {
		ty     event.Type
		data   string
		intent *event.Intent
		code   event.Code
	}{
		{"app/audit", `{"user":"ann"}`, nil, ""},
		{"app/audit", `{"user":7}`, nil, event.CodeDataInvalid},
		{"app/anything", `{"free":[1,{"form":true}]}`, nil, ""},
		{"app/anything", `{"a":1,"a":2}`, nil, event.CodeDataNotJSON},
		{"app/audit", `{"user":"bob"}`, &event.Intent{Op: event.Append()}, event.CodeOpForbidden},
		{"app/unregistered", `{}`, nil, event.CodeUnknownType},
	}
	for _, st := range steps {
		_, err := s.Append(context.Background(), event.Raw{Type: st.ty, Data: json.RawMessage(st.data)}, st.intent.Value())
		_, merr := m.Append(st.ty, json.RawMessage(st.data), st.intent)
		if event.CodeOf(err) != st.code || event.CodeOf(merr) != st.code {
			t.Errorf("append %s %s: %v (model %v), want %q", st.ty, st.data, err, merr, st.code)
		}
	}
	// Without the vocabulary, the same log is unknown_type; with each of
	// its unknown events marked ignorable, it seeds, keeps them, and they
	// round-trip through the wire form.
	log := s.Events()
	if _, err := session.Seed(log); !errors.Is(err, event.CodeUnknownType) {
		t.Fatalf("seed without the vocabulary: %v", err)
	}
	var lines []json.RawMessage
	for _, e := range log {
		e.Ignorable = true
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, b)
	}
	seeded, err := session.SeedJSON(lines)
	if err != nil {
		t.Fatalf("seed of ignorable unknown events: %v", err)
	}
	for i, e := range seeded.Events() {
		b, _ := e.MarshalJSON()
		if string(b) != string(lines[i]) {
			t.Errorf("event %d does not round-trip:\n%s\n%s", i, b, lines[i])
		}
	}
	if got := ops.StateOf(seeded); got.Surface == nil || len(got.Surface) != 0 || len(got.Messages) != 0 {
		t.Errorf("ignorable events reached the surface: %+v", got)
	}
	// "ignorable" must be true when present.
	if _, err := event.Decode([]byte(`{"type":"x/y","seq":0,"time":0,"data":{},"ignorable":false}`)); !errors.Is(err, event.CodeInvalidEnvelope) {
		t.Errorf(`"ignorable":false: %v`, err)
	}
}
