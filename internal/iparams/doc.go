// Package iparams implements installation parameters ("iparams"): configuration
// declared once in an iparams.json file (display name, type, options, default,
// validation), and the values an operator supplies for them.
//
// The declaration format and its rules follow the app development kit's iparams
// specification: thirteen input types, options for radio/dropdown/multiselect,
// typed defaults, paired regex rules with their messages, type_attributes.product
// for domain and api_key, and change events naming a callback in iparams.js.
// Parse checks every rule and reports every problem at once as a Problems error.
//
// callbus adds a few documented extensions, all inside type_attributes so that a
// declaration stays valid for the kit:
//
//   - type_attributes.domain (type domain, required there): the fixed domain part
//     shown after the account-name box, e.g. "mycallcenter.com"; the base URL of the
//     account is https://<account>.<domain>. It is the product→domain mapping: each
//     declaration states it rather than relying on a table compiled into the binary.
//   - type_attributes.min and type_attributes.max (type number): inclusive bounds,
//     enforced by Validate and shown on the page (utils.set can change them there).
//
// and three rules the specification leaves open: a key must be an identifier
// ([A-Za-z_][A-Za-z0-9_]*) so that it maps to an environment variable; a secure
// parameter must be a free-text type and have no default_value (a default would be
// published in the declaration); a number is an integer of at most 10 digits with an
// optional leading sign.
//
// Values are validated by Declarations.Validate. Secure values are held as
// secret.Value: Values.All leaves them out, Values.Get refuses them, and the only
// ways to use one are Values.SetHeader (the specification's Request method) and
// Values.Secret, for driver credentials. Lint, Docs and JSONSchema serve the
// validate, docs and schema commands.
package iparams
