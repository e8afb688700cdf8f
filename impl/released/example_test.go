package released_test

import (
	"errors"
	"fmt"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/released"
)

// ExampleCheck reads a released JSONL file, expands its packed chunk row,
// checks it by the released rules and prints what a released harness
// would send; a file with a b736889ac7 message in it is refused, naming
// the event.
func ExampleCheck() {
	file := []byte(`{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0}
{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}
{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"u1"},"surfaceOp":"append"}
{"type":"text-chunks","seq0":2,"time0":3,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["he","ll","o"]}}
{"type":"assistant/message","seq":5,"time":6,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"hello"}],"source":{"kind":"model","provider":"p","model":"m"}}},"surfaceOp":"append"}
`)
	log, err := released.Read(file)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := released.Check(log)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(s.Events), "events, surface", s.Surface)
	for _, m := range s.Messages {
		fmt.Println(string(m))
	}

	old := []byte(`{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0}
{"type":"user/message","seq":0,"time":1,"data":{"content":[],"source":{"kind":"user"}},"surfaceOp":"append"}
`)
	log, _ = released.Read(old)
	_, err = released.Check(log)
	var ee *event.Error
	fmt.Println(errors.Is(err, event.CodeReleasedMessageInvalid), errors.As(err, &ee) && ee.Seq == 0)
	// Output:
	// 6 events, surface [1 5]
	// {"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"u1"}
	// {"id":"a1","role":"assistant","content":[{"type":"text","text":"hello"}],"source":{"kind":"model","provider":"p","model":"m"}}
	// true true
}
