package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/iparams"
)

// chartOwnedKeys are the parameters the Helm chart sets itself, so its `config`
// value refuses them: the instance id is the pod's name (downward API) and the
// HTTP address is the container port the probes and the Service use.
var chartOwnedKeys = []string{"instance_id", "http_addr", "accounts_dir"}

// processKeys are the settings shared by every account of a process, which
// `accounts` entries do not take: those an account file refuses (config's own list;
// TestAccountSettingsAccepted checks that the chart offers none of them) and the
// Redis connection's (one client per process). account is the entry's name.
var processKeys = []string{
	"account", "nats_url", "nats_creds", "nats_user", "nats_tls_ca", "redis_url",
	"redis_cluster_addrs", "redis_sentinel_addrs", "redis_sentinel_master",
	"subject_prefix", "stream_name", "stream_max_age_hours", "stream_duplicate_window_seconds",
	"stream_replicas", "log_level", "log_format", "debug_pprof", "lease_ttl_seconds",
	"shutdown_timeout_seconds",
}

// accountNamePattern is an account's name in `accounts`: a NATS subject token, and
// with ".json" a Secret key.
const accountNamePattern = `^[A-Za-z0-9_-]+$`

// HelmValuesSchema returns the draft-07 JSON Schema of the Helm chart's whole
// values file, checked in as helm/callbus/values.schema.json (Helm refuses values
// that do not match it on install, upgrade, template and lint). The chart's own
// values are described here; the settings come from config/iparams.json: `config`
// has one property per parameter that is neither secure nor chart-owned (with the
// declared types, options, bounds and patterns, as in config.Schema), and `secret`
// and `existingSecret.keys` one per secure parameter. Unknown keys are refused at every
// level the chart reads, so that a typo fails the install instead of being ignored.
// The output is indented and ends with a newline. Errors come from a broken
// embedded declaration only.
func HelmValuesSchema() ([]byte, error) {
	d, err := config.Declarations()
	if err != nil {
		return nil, err
	}
	var generated struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(iparams.JSONSchema(d), &generated); err != nil {
		return nil, fmt.Errorf("read generated schema: %w", err)
	}
	owned := make(map[string]bool, len(chartOwnedKeys))
	for _, k := range chartOwnedKeys {
		owned[k] = true
	}
	var settings, secrets, secretKeys, account jsonObject
	for _, p := range d.Params() { // declaration order
		prop := generated.Properties[p.Key]
		if p.Key == "api_key" {
			account = append(account, jsonMember{p.Key, jsonObject{
				{"title", p.DisplayName},
				{"description", "The account's key, written to the chart's accounts Secret as <account>.key; empty: from accountKeysSecret."},
				{"writeOnly", true},
				{"anyOf", []any{jsonObject{{"const", ""}}, prop}},
			}})
		}
		switch {
		case p.Secure:
			secrets = append(secrets, jsonMember{p.Key, jsonObject{
				{"title", p.DisplayName},
				{"description", "Empty: not given. Mounted as a file named by " + d.EnvVar(p.Key) + "_FILE."},
				{"writeOnly", true},
				{"anyOf", []any{jsonObject{{"const", ""}}, prop}},
			}})
			secretKeys = append(secretKeys, jsonMember{p.Key, jsonObject{
				{"description", "Key of existingSecret holding " + p.DisplayName + " (" + p.Key + "); empty: the Secret does not hold it."},
				{"type", "string"},
				{"pattern", `^[-._a-zA-Z0-9]*$`},
			}})
		case !owned[p.Key]:
			settings = append(settings, jsonMember{p.Key, prop})
			if !slices.Contains(processKeys, p.Key) {
				account = append(account, jsonMember{p.Key, prop})
			}
		}
	}
	root := chartSchema(settings, secrets, secretKeys, account)
	compact, err := root.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("marshal chart schema: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, fmt.Errorf("indent chart schema: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// chartSchema is the values file: the chart's values in values.yaml's order, with
// the generated settings.
func chartSchema(settings, secrets, secretKeys, account jsonObject) jsonObject {
	return jsonObject{
		{"$schema", iparams.SchemaDraft},
		{"title", "callbus Helm chart values"},
		{"description", "Generated from config/iparams.json and deploy/schema.go by `go test -update` in deploy/: do not edit."},
		{"type", "object"},
		{"additionalProperties", false},
		{"properties", jsonObject{
			{"global", helmOpen("object", "Values shared by a parent chart; callbus reads none.")},
			{"image", helmClosed("The poller's image.", jsonObject{
				{"repository", jsonObject{{"type", "string"}, {"minLength", 1}}},
				{"tag", helmString("Image tag; empty means the chart's appVersion.")},
				{"digest", jsonObject{{"description", "sha256:… digest; when set it wins over tag."},
					{"type", "string"}, {"pattern", `^(sha256:[a-f0-9]{64})?$`}}},
				{"pullPolicy", helmEnum("", "Always", "IfNotPresent", "Never")},
			})},
			{"imagePullSecrets", helmArray("LocalObjectReference list: Secrets to pull the image with.",
				helmClosed("", jsonObject{{"name", jsonObject{{"type", "string"}, {"minLength", 1}}}}, "name"))},
			{"nameOverride", helmString("Replaces the chart's name in resource names.")},
			{"fullnameOverride", helmString("Replaces <release>-<chart> in resource names.")},
			{"replicaCount", jsonObject{
				{"description", "Replicas. One account: one leads (holds the Redis lease), the others stand by. A fleet: any number, sharing the accounts."},
				{"type", "integer"}, {"minimum", 0}}},
			{"config", jsonObject{
				{"title", "callbus settings"},
				{"description", "The poller's settings by iparams key, each passed as CALLBUS_<KEY> from a ConfigMap. " +
					"Secure settings go under secret or existingSecret; " + strings.Join(chartOwnedKeys, " and ") + " are set by the chart. " +
					"Required settings (account, the API key, api_url or api_domain) are checked by the poller at start, " +
					"which lists every problem and exits with status 2, so that the chart also renders unconfigured (helm lint)."},
				{"type", "object"},
				{"additionalProperties", false},
				{"properties", settings},
			}},
			{"secret", helmClosed("Secure settings for a Secret the chart creates, mounted as files and named by CALLBUS_<KEY>_FILE. "+
				"Leave empty when existingSecret is used.", secrets)},
			{"existingSecret", helmClosed("A Secret managed outside the chart, used instead of secret.", jsonObject{
				{"name", jsonObject{{"description", "Name of the Secret in the release's namespace; empty: use secret."},
					{"type", "string"}, {"pattern", secretNamePattern}}},
				{"keys", helmClosed("Key of the Secret holding each secure setting.", secretKeys)},
			})},
			{"accounts", jsonObject{
				{"description", "A fleet: one entry per account (its name), with its settings by iparams key, laid over config, and its api_key; " +
					"written to a Secret as <account>.json and mounted as the accounts directory."},
				{"type", "object"},
				{"propertyNames", jsonObject{{"pattern", accountNamePattern}}},
				{"additionalProperties", jsonObject{
					{"type", []string{"object", "null"}},
					{"additionalProperties", false},
					{"properties", account},
				}},
			}},
			{"accountKeysSecret", helmSecretName("A Secret of yours holding <account>.key for each account of accounts; empty: the keys are in accounts.")},
			{"existingAccountsSecret", helmSecretName("A Secret of yours that is the whole accounts directory (<account>.json and key files), instead of accounts.")},
			{"nats", helmClosed("NATS files from Secrets of yours; the chart sets nats_creds and nats_tls_ca to them.", jsonObject{
				{"credsSecret", helmSecretKey("The NATS .creds file.")},
				{"tlsCASecret", helmSecretKey("The CA certificate (PEM) of the NATS servers.")},
			})},
			{"serviceAccount", helmClosed("The pod's ServiceAccount.", jsonObject{
				{"create", helmBool("Create a ServiceAccount (no token is mounted).")},
				{"name", helmString("Its name; empty: the full name when created, default otherwise.")},
				{"annotations", helmStringMap("Annotations of the ServiceAccount.")},
			})},
			{"automountServiceAccountToken", helmBool("Mount a Kubernetes API token in the pod; callbus never uses one.")},
			{"podAnnotations", helmStringMap("Annotations of the pods.")},
			{"podLabels", helmStringMap("Extra labels of the pods.")},
			{"resources", helmOpen("object", "ResourceRequirements of the poller container.")},
			{"podSecurityContext", helmOpen("object", "PodSecurityContext.")},
			{"securityContext", helmOpen("object", "SecurityContext of the poller container.")},
			{"terminationGracePeriodSeconds", jsonObject{
				{"description", "Seconds between SIGTERM and SIGKILL; null: config.shutdown_timeout_seconds + 10. Must exceed shutdown_timeout_seconds."},
				{"type", []string{"integer", "null"}}, {"minimum", 1}}},
			{"probes", helmClosed("Probe timings (paths and port are the chart's).", jsonObject{
				{"startup", helmClosed("", jsonObject{{"periodSeconds", helmPositive()}, {"failureThreshold", helmPositive()}})},
				{"liveness", helmProbeTimings()},
				{"readiness", helmProbeTimings()},
			})},
			{"service", helmClosed("The Service of the http port (/metrics).", jsonObject{
				{"type", helmEnum("", "ClusterIP", "NodePort", "LoadBalancer")},
				{"port", jsonObject{{"type", "integer"}, {"minimum", 1}, {"maximum", 65535}}},
				{"annotations", helmStringMap("Annotations of the Service.")},
			})},
			{"serviceMonitor", helmClosed("A Prometheus Operator ServiceMonitor (monitoring.coreos.com/v1).", jsonObject{
				{"enabled", helmBool("Render it.")},
				{"namespace", helmString("Its namespace; empty: the release's.")},
				{"labels", helmStringMap("Extra labels, e.g. the one your Prometheus selects.")},
				{"interval", helmDuration()},
				{"scrapeTimeout", helmDuration()},
			})},
			{"prometheusRule", helmClosed("A Prometheus Operator PrometheusRule with callbus's alerts (monitoring.coreos.com/v1).", jsonObject{
				{"enabled", helmBool("Render it.")},
				{"namespace", helmString("Its namespace; empty: the release's.")},
				{"labels", helmStringMap("Extra labels, e.g. the one your Prometheus selects rules by.")},
			})},
			{"grafanaDashboard", helmClosed("callbus's Grafana dashboard in a ConfigMap for Grafana's dashboard sidecar.", jsonObject{
				{"enabled", helmBool("Render it.")},
				{"namespace", helmString("Its namespace; empty: the release's.")},
				{"sidecarLabel", jsonObject{{"description", "The label the sidecar watches."},
					{"type", "string"}, {"pattern", `^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`}}},
				{"sidecarLabelValue", helmString("Its value.")},
				{"annotations", helmStringMap("Annotations of the ConfigMap, e.g. grafana_folder.")},
			})},
			{"networkPolicy", helmClosed("A NetworkPolicy: the http port in; DNS, NATS, Redis and the API out.", jsonObject{
				{"enabled", helmBool("Render it.")},
				{"ingress", helmClosed("", jsonObject{{"from", helmPeers("Peers allowed to the http port; empty: any.")}})},
				{"egress", helmClosed("", jsonObject{
					{"dns", helmClosed("", jsonObject{{"enabled", helmBool("Allow DNS.")}, {"ports", helmPorts()}, {"to", helmPeers("DNS servers; empty: any.")}})},
					{"nats", helmEgressRule("NATS")},
					{"redis", helmEgressRule("Redis")},
					{"api", helmEgressRule("the call-center API")},
					{"extra", helmArray("More NetworkPolicyEgressRule objects.", helmOpen("object", ""))},
				})},
			})},
			{"podDisruptionBudget", helmPDB()},
			{"podAntiAffinity", helmEnum("Spread replicas over nodes: soft (preferred), hard (required), none; ignored when affinity is set.",
				"soft", "hard", "none")},
			{"affinity", helmOpen("object", "Affinity of the pods; replaces podAntiAffinity.")},
			{"topologySpreadConstraints", helmArray("TopologySpreadConstraint list.", helmOpen("object", ""))},
			{"nodeSelector", helmStringMap("Node labels the pods require.")},
			{"tolerations", helmArray("Toleration list.", helmOpen("object", ""))},
			{"priorityClassName", helmString("PriorityClass of the pods.")},
			{"extraEnv", helmArray("More EnvVar objects for the poller container.", helmOpen("object", ""))},
			{"extraVolumes", helmArray("More Volume objects.", helmOpen("object", ""))},
			{"extraVolumeMounts", helmArray("More VolumeMount objects for the poller container.", helmOpen("object", ""))},
			{"tests", helmClosed("The `helm test` pod: GET /readyz through the Service.", jsonObject{
				{"enabled", helmBool("Render it.")},
				{"image", helmClosed("An image with sh and wget (busybox).", jsonObject{
					{"repository", jsonObject{{"type", "string"}, {"minLength", 1}}},
					{"tag", helmString("")},
					{"digest", jsonObject{{"type", "string"}, {"pattern", `^(sha256:[a-f0-9]{64})?$`}}},
				})},
				{"attempts", jsonObject{{"description", "Tries, 5 s apart."}, {"type", "integer"}, {"minimum", 1}}},
			})},
		}},
	}
}

// Helpers for the chart's schema, each a property schema.

func helmString(desc string) jsonObject { return helmDescribed(desc, jsonObject{{"type", "string"}}) }

func helmBool(desc string) jsonObject { return helmDescribed(desc, jsonObject{{"type", "boolean"}}) }

func helmPositive() jsonObject { return jsonObject{{"type", "integer"}, {"minimum", 1}} }

func helmDuration() jsonObject {
	return jsonObject{{"type", "string"}, {"pattern", `^([0-9]+(ms|s|m|h))+$`}}
}

func helmEnum(desc string, options ...string) jsonObject {
	return helmDescribed(desc, jsonObject{{"type", "string"}, {"enum", options}})
}

// helmOpen is a Kubernetes object (or list) passed through as is: the API server checks it.
func helmOpen(typ, desc string) jsonObject { return helmDescribed(desc, jsonObject{{"type", typ}}) }

func helmStringMap(desc string) jsonObject {
	return helmDescribed(desc, jsonObject{{"type", "object"}, {"additionalProperties", jsonObject{{"type", "string"}}}})
}

func helmArray(desc string, items jsonObject) jsonObject {
	return helmDescribed(desc, jsonObject{{"type", "array"}, {"items", items}})
}

// helmClosed is an object of the chart's own, whose unknown keys are typos.
func helmClosed(desc string, props jsonObject, required ...string) jsonObject {
	s := helmDescribed(desc, jsonObject{{"type", "object"}, {"additionalProperties", false}})
	if len(required) > 0 {
		s = append(s, jsonMember{"required", required})
	}
	return append(s, jsonMember{"properties", props})
}

func helmProbeTimings() jsonObject {
	return helmClosed("", jsonObject{{"periodSeconds", helmPositive()}, {"timeoutSeconds", helmPositive()}, {"failureThreshold", helmPositive()}})
}

func helmPeers(desc string) jsonObject {
	return helmArray(desc, helmOpen("object", "NetworkPolicyPeer: namespaceSelector, podSelector or ipBlock."))
}

func helmPorts() jsonObject {
	return helmArray("NetworkPolicyPort list.", helmClosed("", jsonObject{
		{"port", jsonObject{{"type", []string{"integer", "string"}}}},
		{"endPort", helmPositive()},
		{"protocol", helmEnum("", "TCP", "UDP", "SCTP")},
	}, "port"))
}

func helmEgressRule(what string) jsonObject {
	return helmClosed("Egress to "+what+".", jsonObject{{"ports", helmPorts()}, {"to", helmPeers("Its peers; empty: any destination on these ports.")}})
}

// secretNamePattern is a Secret's name (a DNS subdomain), or empty.
const secretNamePattern = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`

func helmSecretName(desc string) jsonObject {
	return helmDescribed(desc, jsonObject{{"type", "string"}, {"pattern", secretNamePattern}})
}

// helmSecretKey is a key of a Secret of the user's: its name (empty: none) and key.
func helmSecretKey(desc string) jsonObject {
	return helmClosed(desc, jsonObject{
		{"name", helmSecretName("The Secret; empty: none.")},
		{"key", jsonObject{{"type", "string"}, {"pattern", `^[-._a-zA-Z0-9]+$`}}},
	})
}

// helmPDB is the PodDisruptionBudget: at most one of minAvailable and
// maxUnavailable (the other null or absent), as the API requires; neither means
// maxUnavailable 1. Both default to null, so that giving one needs no null for the
// other (helm lint does not apply a null override).
func helmPDB() jsonObject {
	budget := jsonObject{{"type", []string{"integer", "string", "null"}}, {"minimum", 0}, {"pattern", `^[0-9]+%$`}}
	given := func(key string) jsonObject {
		return jsonObject{{"properties", jsonObject{{key, jsonObject{{"type", []string{"integer", "string"}}}}}}, {"required", []string{key}}}
	}
	s := helmClosed("Rendered when enabled and replicaCount > 1; unhealthy pods may always be evicted. "+
		"At most one of minAvailable and maxUnavailable; neither: maxUnavailable 1.", jsonObject{
		{"enabled", helmBool("Render it.")},
		{"minAvailable", budget},
		{"maxUnavailable", budget},
	})
	return append(s, jsonMember{"not", jsonObject{{"allOf", []any{given("minAvailable"), given("maxUnavailable")}}}})
}

// helmDescribed puts desc first in s, when there is one.
func helmDescribed(desc string, s jsonObject) jsonObject {
	if desc == "" {
		return s
	}
	return append(jsonObject{{"description", desc}}, s...)
}

// jsonMember and jsonObject build a JSON object that keeps its keys in order, so
// that the schema reads in values.yaml's order.
type jsonMember struct {
	key   string
	value any
}

type jsonObject []jsonMember

// MarshalJSON writes the members in order, without HTML escaping (through
// iparams.OrderedObject; the short local type keeps the literals below readable).
func (o jsonObject) MarshalJSON() ([]byte, error) {
	out := make(iparams.OrderedObject, len(o))
	for i, m := range o {
		out[i] = iparams.Member{Key: m.key, Value: m.value}
	}
	return out.MarshalJSON()
}
