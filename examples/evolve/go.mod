module github.com/fsmgen/fsmgen/examples/evolve

go 1.26.8

require github.com/fsmgen/fsmgen v0.0.0

replace (
	github.com/fsmgen/fsmgen => ../..
	github.com/fsmgen/fsmgen/store/postgres => ../../store/postgres
	github.com/fsmgen/fsmgen/store/sqlite => ../../store/sqlite
)
