// Package conformance is the conformance suite of the surface
// specification: the vectors (generated from the model by gen/vectors and
// embedded here), the language-neutral testee protocol
// (spec/PROTOCOL.md), and the runner that plays vectors against a testee
// (the built-in implementation, the model, or any program speaking the
// protocol) and reports, in text, JSON or JUnit XML.
package conformance

//go:generate go run ../gen/vectors -out vectors
