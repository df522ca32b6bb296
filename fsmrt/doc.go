// Package fsmrt is the small runtime that every package fsmgen generates imports. It holds
// what is the same for every machine: enum names, the typed refusal errors, the registry,
// timeout-level arithmetic and the version guard. The generated package keeps what is
// specific to its spec: the State and Event types, the transition tables as data, the
// context and payload structs, and thin typed wrappers over this package.
//
// fsmrt imports only the standard library. Its API is for generated code first; programs
// use it through the generated types (review.TaskRegistry is a fsmrt.Registry, and
// review.ErrRefused is fsmrt.ErrRefused), so that code handling several machines can match
// their errors with one sentinel.
package fsmrt

// Version is the version of the contract between generated code and this runtime.
// Generated code says which version it was written for with
//
//	const _ = fsmrt.EnforceVersion(fsmrt.MaxVersion - 1)
//	const _ = fsmrt.EnforceVersion(1 - fsmrt.MinVersion)
//
// so that code generated for a contract this runtime does not support fails to compile
// (a negative constant does not convert to EnforceVersion): regenerate it with the fsmgen
// of the same module version. Version 2: Actions.Act returns an error (actions that may
// fail), and a Def may describe a statechart.
const Version = 2

// MinVersion and MaxVersion bound the generated-code versions this runtime supports.
const (
	MinVersion = 2
	MaxVersion = Version
)

// EnforceVersion is the type of the compile-time version guard in generated code.
type EnforceVersion uint
