// Package setup serves the installation page of the poller's parameters at
// /custom_configs, as the app development kit's test server does: a form with the
// proper input for each of the thirteen iparam types, the change callbacks of
// config/assets/iparams.js running in the browser with utils.get and utils.set,
// and an INSTALL button.
//
// INSTALL posts the values as JSON. The server validates them with the same rules
// as config.Load, checks the API address and key with one cheap authenticated
// request (GET {base}/api/v1/user-statuses?per_page=1), and saves the values file
// that `poller run --config FILE` reads, with mode 0600. Secure values are never
// sent back to the page: it shows them empty, marked "set", and an empty secure
// field at INSTALL keeps the saved value.
//
// The page is self-contained (html/template, one small embedded script and style
// sheet, no external resources) and meant for a loopback address: it refuses
// cross-origin posts, but anyone who can reach it can overwrite the values file.
package setup
