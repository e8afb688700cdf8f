// Package model is the oracle: the spec of spec/README.md written as
// plainly as possible, with no caching and no cleverness. Every query
// rescans the whole log from the start. It shares with the implementation
// only data types (event.Event, message.Message), the error codes and the
// catalog generated from spec/, and the wire decoder event.Decode; every
// rule, the JSON checks and the message mapping are written here again,
// independently, so that differential tests compare two implementations.
//
// It is slow on purpose: O(n) per query, O(n^2) over a session's life.
package model
