package setup

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/iparams"
)

// verifyTimeout bounds the API check.
const verifyTimeout = 10 * time.Second

// pollerRules are the default Rules: those of config.FromValues, which also runs
// on partial values.
func pollerRules(v *iparams.Values) iparams.Problems {
	_, ps := config.FromValues(v)
	return ps
}

// pollerChecks are the default Verify: the rules between the poller's parameters,
// then the API check when they hold.
func pollerChecks(client *http.Client) func(context.Context, *iparams.Values) iparams.Problems {
	return func(ctx context.Context, v *iparams.Values) iparams.Problems {
		s, ps := config.FromValues(v)
		if len(ps) > 0 {
			return ps
		}
		return verifyAPI(ctx, client, s.APIURL, v)
	}
}

// verifyAPI checks the API address and key with one cheap authenticated request,
// GET {base}/api/v1/user-statuses?per_page=1. A refused key is a problem on
// api_key; an address that does not answer as the API is a problem on whichever
// of api_url and api_domain is set.
func verifyAPI(ctx context.Context, client *http.Client, base string, v *iparams.Values) iparams.Problems {
	addrKey := "api_url"
	if v.IsSet("api_domain") {
		addrKey = "api_domain"
	}
	problem := func(key, format string, args ...any) iparams.Problems {
		return iparams.Problems{{Key: key, Message: fmt.Sprintf(format, args...)}}
	}
	ctx, cancel := context.WithTimeout(ctx, verifyTimeout)
	defer cancel()
	target := base + "/api/v1/user-statuses?per_page=1"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return problem(addrKey, "not a usable API address: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	if err := v.SetHeader(req.Header, "api_key", "X-Api-Auth"); err != nil {
		return problem("api_key", "%v", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return problem(addrKey, "%s", unreachable(req.URL.Host, err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized:
		return problem("api_key", "the API refused this key (401 Unauthenticated): copy it again from your profile settings")
	case code == http.StatusForbidden:
		return problem("api_key", "the API accepted the key but refused to list user statuses with it (403 Forbidden)")
	case code == http.StatusTooManyRequests:
		return problem(addrKey, "the account's rate limit is used up (429 Too Many Requests): try again in a minute")
	case code == http.StatusNotFound:
		return problem(addrKey, "no call-center API at %s (404 for /api/v1/user-statuses)", base)
	case code >= 300 && code < 400:
		return problem(addrKey, "the address redirects (%d) to %q: give the final address", code, resp.Header.Get("Location"))
	case code < 200 || code >= 300:
		return problem(addrKey, "the API answered %s", resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return problem(addrKey, "the address answers, but not with the API's JSON (Content-Type %q)", resp.Header.Get("Content-Type"))
	}
	return nil
}
