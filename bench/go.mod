module github.com/fsmgen/fsmgen/bench

go 1.26.8

require (
	github.com/fsmgen/fsmgen v0.0.0
	github.com/looplab/fsm v1.0.3
	github.com/qmuntal/stateless v1.7.2
)

require (
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1 // indirect
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/fsmgen/fsmgen => ../

tool (
	github.com/fsmgen/fsmgen/cmd/fsmgen
	golang.org/x/perf/cmd/benchstat
)
