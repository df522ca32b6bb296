// Package browsertest tests the preview page (package preview, fsmgen preview) where it
// runs: the fsmgen binary serving it, and a real headless Chromium driven through chromedp.
// It is a module of its own so that the main module never downloads chromedp.
package browsertest
