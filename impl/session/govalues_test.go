package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// TestGoValueDepthBounded: SURF-4. A Go value nested a million levels deep
// is refused with event.data_not_json, quickly and in bounded memory,
// before encoding/json could overflow the stack on it; so is a cycle.
func TestGoValueDepthBounded(t *testing.T) {
	var deep any = "leaf"
	for range 1_000_000 {
		deep = []any{deep}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := session.New()
	_, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: map[string]any{"todos": deep}})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, event.CodeDataNotJSON) || !strings.Contains(err.Error(), "deeper than 10000") {
		t.Fatalf("a million levels: %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("refusing it allocated %d MiB", grew>>20)
	}
	// The limit is the data rule's: 10,000 levels pass, 10,001 do not.
	for levels, ok := range map[int]bool{10000: true, 10001: false} {
		var v any = map[string]any{}
		for range levels - 2 {
			v = []any{v}
		}
		_, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: map[string]any{"todos": v}})
		if (err == nil) != ok {
			t.Errorf("%d levels: %v", levels, err)
		}
	}
	type node struct{ Next *node }
	n := &node{}
	n.Next = n
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: map[string]any{"todos": []any{}, "n": n}}); !errors.Is(err, event.CodeDataNotJSON) {
		t.Fatalf("a cycle: %v", err)
	}
	if s.Len() != 1 {
		t.Fatalf("log has %d events, want 1", s.Len())
	}
}

// TestGoStringsMustBeUTF8: SURF-4. encoding/json writes U+FFFD for an
// invalid byte, so "c\xff" and "c\xfe" would both be stored as "c\ufffd";
// they are refused instead, in values, map keys and typed data.
func TestGoStringsMustBeUTF8(t *testing.T) {
	s := session.New()
	cases := []any{
		event.ToolCallData{Turn: 1, Step: 1, CallID: "c\xff", Name: "read", Arguments: "{}"},
		map[string]any{"todos": []any{"\xfe"}},
		map[string]any{"todos": []any{}, "k\xff": 1},
	}
	for _, c := range cases {
		typ := event.TypeTodoWrite
		if _, ok := c.(event.ToolCallData); ok {
			typ = event.TypeToolCall
		}
		if _, err := s.Append(context.Background(), event.Raw{Type: typ, Data: c}); !errors.Is(err, event.CodeDataNotJSON) || !strings.Contains(err.Error(), "UTF-8") {
			t.Errorf("%#v: %v", c, err)
		}
	}
	// Valid UTF-8 beyond ASCII is fine.
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeToolCall, Data: event.ToolCallData{Turn: 1, Step: 1, CallID: "c\u00e9", Name: "read", Arguments: "{}"}}); err != nil {
		t.Fatal(err)
	}
}

// TestMarshalErrorsKeepTheirDetail: a value encoding/json cannot marshal
// is event.data_not_json with encoding/json's own reason.
func TestMarshalErrorsKeepTheirDetail(t *testing.T) {
	s := session.New()
	for _, c := range []struct {
		v    any
		want string
	}{
		{map[string]any{"todos": []any{math.NaN()}}, "NaN"},
		{map[string]any{"todos": []any{}, "c": make(chan int)}, "chan"},
	} {
		_, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: c.v})
		var ee *event.Error
		if !errors.As(err, &ee) || ee.Code != event.CodeDataNotJSON || !strings.Contains(ee.Detail, c.want) || strings.Contains(ee.Detail, "byte 0") {
			t.Errorf("%v: %v", c.v, err)
		}
	}
	// And a RawMessage is still taken as it is.
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: json.RawMessage(`{"todos":[]}`)}); err != nil {
		t.Fatal(err)
	}
}
