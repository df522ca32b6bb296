// Package docsnippets holds the test that compiles the Go snippets of the documentation
// (README.md and docs/*.md), so that the API the documents show is the API the generator
// and the runtime have.
//
// Every ```go fenced block carries an annotation, an HTML comment on the line before the
// fence that says how the block compiles:
//
//	<!-- compile: file -->          a whole file, package clause and imports included
//	<!-- compile: decls -->         top-level declarations
//	<!-- compile: body -->          statements, the body of a function without parameters
//	<!-- compile: body func(ctx context.Context, store fsmrt.Store) error -->
//	                                statements, the body of a function of that signature
//	<!-- compile: api PKG -->       a listing of PKG's declarations: functions and methods
//	                                without bodies, types, constants and variables, each of
//	                                which must be declared in PKG as the listing shows it
//	<!-- compile: skip (why) -->    not compiled, for the reason given
//
// A block without an annotation fails the test. Each block compiles as a package of its
// own in a throwaway module whose go.mod points at this repository. Blocks other than
// whole files may use, without importing them, the standard packages the documents use,
// the runtime (fsmrt, storetest), the seeds' generated packages (review, pipeline, ...) and
// the packages generated from testdata/*.fsm.yaml: task, the machine docs/generated-api.md
// describes, which declares every construct the generator has code for, and order. In a
// body, variables declared at the top level need not be used.
//
// An api listing is checked both ways for interfaces (the listing's methods are exactly
// the package's), and as written for the rest: a function or method has the listed
// signature, a type alias denotes the listed type, a defined type has the listed
// underlying type, a struct has the listed fields with their types, a constant has the
// listed type and value, a variable the listed type or the listed value's type. Names in
// a listing are PKG's unless qualified.
package docsnippets
