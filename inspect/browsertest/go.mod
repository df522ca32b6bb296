module github.com/fsmgen/fsmgen/inspect/browsertest

go 1.26.8

require (
	github.com/chromedp/cdproto v0.0.0-20250724212937-08a3db8b4327
	github.com/chromedp/chromedp v0.14.2
	github.com/fsmgen/fsmgen v0.0.0
	github.com/fsmgen/fsmgen/store/postgres v0.0.0
	github.com/fsmgen/fsmgen/store/sqlite v0.0.0
)

require (
	github.com/chromedp/sysutil v1.1.0 // indirect
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/gobwas/httphead v0.1.0 // indirect
	github.com/gobwas/pool v0.2.1 // indirect
	github.com/gobwas/ws v1.4.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.12.0 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.62.0 // indirect
)

replace (
	github.com/fsmgen/fsmgen => ../..
	github.com/fsmgen/fsmgen/store/postgres => ../../store/postgres
	github.com/fsmgen/fsmgen/store/sqlite => ../../store/sqlite
)

// The fsmgen of each store's module, which the tests build and run (fsmgen inspect).
tool (
	github.com/fsmgen/fsmgen/store/postgres/cmd/fsmgen
	github.com/fsmgen/fsmgen/store/sqlite/cmd/fsmgen
)
