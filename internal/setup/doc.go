// Package setup serves the installation page of the poller's parameters at
// /custom_configs, as the app development kit's test server does: a form with the
// proper input for each of the thirteen iparam types, the change callbacks of
// config/assets/iparams.js running in the browser with utils.get and utils.set,
// and an INSTALL button.
//
// The fields are grouped in sections derived from the key names (groups.go: the
// iparams format has no group attribute): the required ones first, advanced
// sections collapsed. A number is a text input with a numeric keyboard, so that
// what the user typed is what is checked and sent, never silently dropped for the
// default; a multiselect is a row of checkboxes with readable names.
//
// INSTALL posts the values as JSON. The server validates them with the same rules
// as config.Load, every problem at once (the rules between parameters included),
// checks the API address and key with one cheap authenticated request (GET
// {base}/api/v1/user-statuses?per_page=1), and saves the values file that `poller
// run --config FILE` reads, with mode 0600. When the page finds problems itself it
// posts to /custom_configs/check instead, which validates alike but never calls
// the API nor saves, so that the page lists the server's problems with its own:
// by field name next to the button, the first invalid field focused. Secure values
// are never sent back to the page: it shows them empty, marked "set", and an empty
// secure field at INSTALL keeps the saved value.
//
// The page is self-contained (html/template, small embedded scripts and a style
// sheet, no external resources) and meant for a loopback address: it refuses
// cross-origin posts, but anyone who can reach it can overwrite the values file.
package setup
