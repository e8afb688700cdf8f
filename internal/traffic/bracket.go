package traffic

// SeedSystemBracket returns the wire lines of a short session in which the
// seed system (b736889ac7) compacted: a turn whose first user message and
// assistant reply are folded into a summary by the four-event bracket
// compact/start, compact/summary, the summary user/message (a replace of
// [1, 2]) and compact/end. Its messages are the summary (seq 6) and the
// retained user message (seq 3).
func SeedSystemBracket() []string {
	return []string{
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}}`,
		`{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"read f.go"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
		`{"type":"assistant/message","seq":2,"time":3,"data":{"turn":1,"step":1,"content":[{"type":"text","text":"it says 41"}]},"sourceEventSeqs":[],"surfaceOp":"append"}`,
		`{"type":"user/message","seq":3,"time":4,"data":{"content":[{"type":"text","text":"make it 42"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
		`{"type":"compact/start","seq":4,"time":5,"data":{"turn":1}}`,
		`{"type":"compact/summary","seq":5,"time":6,"data":{"summary":[{"type":"text","text":"f.go returns 41."}],"shadowedRange":{"start":1,"end":2},"shadowedSeqs":[1,2],"shadowedTokenCount":12,"provider":"deepseek","model":"deepseek-chat","maxTokens":8192}}`,
		`{"type":"user/message","seq":6,"time":7,"data":{"content":[{"type":"text","text":"f.go returns 41."}],"source":{"kind":"plugin","plugin":"compact"}},"sourceEventSeqs":[4,5,1,2],"surfaceOp":{"op":"replace","start":1,"end":2}}`,
		`{"type":"compact/end","seq":7,"time":8,"data":{"turn":1}}`,
		`{"type":"turn/end","seq":8,"time":9,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
	}
}
