package testenv

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium returns Debian's chromium (apt-get install chromium) or another
// Chrome; without one the test skips (SkipOptional) saying what was not tested.
func Chromium(t testing.TB, untested string) string {
	t.Helper()
	return Program(t, "no chromium on the PATH (apt-get install chromium): "+untested,
		"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell")
}

// Browser starts a headless Chromium with a width×height window and returns a
// tab's context; the browser ends with the test.
func Browser(t testing.TB, untested string, width, height int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium(t, untested)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser, bound to ctx only
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Screenshot saves the whole page as <prefix>-<name>.png, and what the window
// shows as <prefix>-<name>-window.png, when the environment variable env names a
// path prefix: a test artifact to look at the page.
func Screenshot(t testing.TB, ctx context.Context, env, name string) {
	t.Helper()
	prefix := os.Getenv(env)
	if prefix == "" {
		return
	}
	for _, shot := range []struct {
		suffix string
		action chromedp.Action[[]byte]
	}{{"-window", chromedp.CaptureScreenshot()}, {"", chromedp.FullScreenshot(100)}} { // the window first: the full one may scroll
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		png, err := chromedp.Run(sctx, shot.action)
		cancel()
		path := prefix + "-" + name + shot.suffix + ".png"
		if err == nil {
			err = os.WriteFile(path, png, 0o644)
		}
		if err != nil {
			t.Errorf("screenshot: %v", err)
		}
		t.Logf("screenshot %s", path)
	}
}
