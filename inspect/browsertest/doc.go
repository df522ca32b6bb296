// Package browsertest tests the inspector (package inspect) where it runs: over a real
// SQLite file and a real PostgreSQL server, and in a real headless Chromium. It is a module
// of its own so that the main module never downloads a database driver or chromedp.
package browsertest
