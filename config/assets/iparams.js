// Change callbacks of config/iparams.json, run by the setup page (poller setup,
// path /custom_configs). Each receives the field's new value: a string, an array of
// strings for a multiselect, a boolean for a checkbox.
//
// utils.get(key) reads a field's current value; utils.set(key, {value, label,
// visible, disabled, required, hint, values, min, max}) changes a field.
// Return rules: a non-empty string is an error (the field is cleared); "" or nothing
// accepts the value; a promise accepts when it resolves and fails with the message
// it rejects with; `condition ? "" : "error message"` is the conditional form (the
// success branch must be "": the page cannot tell a success message from an error).

var urlHint = "Base URL of the call-center API, without /api/v1, e.g. https://acme.mycallcenter.com.";

// The API is reached either by URL or by account domain: filling one hides the other.
function apiUrlChange(newValue) {
  var hasURL = newValue !== "";
  utils.set("api_domain", { visible: !hasURL });
  if (hasURL) {
    utils.set("api_domain", { value: "" });
  }
  var plain = /^http:\/\//i.test(newValue) && !/^http:\/\/(127\.|localhost[:\/]|localhost$|\[::1\])/i.test(newValue);
  utils.set("api_url", {
    hint: plain ? "Plain http:// sends the API key unencrypted: use https:// except for a local simulator." : urlHint
  });
  return /\/api\/v1\/?$/.test(newValue) ? "Leave out /api/v1: callbus adds it to every path" : "";
}

// A domain makes the URL unnecessary, and its account name is a good default account.
function apiDomainChange(newValue) {
  var hasDomain = newValue !== "";
  utils.set("api_url", { visible: !hasDomain });
  if (hasDomain && utils.get("account") === "") {
    utils.set("account", { value: newValue.toLowerCase() });
  }
}

// A credentials file replaces user and password.
function natsCredsChange(newValue) {
  var hasCreds = newValue !== "";
  utils.set("nats_user", { disabled: hasCreds, hint: hasCreds ? "Not used with a credentials file." : "User name for NATS user/password authentication, e.g. callbus." });
  utils.set("nats_password", { disabled: hasCreds });
  if (hasCreds) {
    utils.set("nats_user", { value: "" });
  }
  return /^\s|\s$/.test(newValue) ? "Remove the spaces around the path" : "";
}

// The account's rate limit is shared by every integration: keep some for them.
function rateLimitShareChange(newValue) {
  return Number(newValue) <= 95
    ? ""
    : "Above 95% leaves the account's other integrations almost no requests: they would starve on 429 Too Many Requests";
}

// The duplicate window may not outlast the retention: cap its input.
function streamMaxAgeChange(newValue) {
  var seconds = Number(newValue) * 3600;
  if (seconds > 0) {
    utils.set("stream_duplicate_window_seconds", { max: Math.min(604800, seconds) });
  }
}

// Checked asynchronously, as a callback that needs a server round trip would be.
function duplicateWindowChange(newValue) {
  var maxAge = Number(utils.get("stream_max_age_hours")) * 3600;
  return new Promise(function (resolve, reject) {
    if (maxAge > 0 && Number(newValue) > maxAge) {
      reject("The duplicate window cannot be longer than the retention (" + maxAge + " seconds)");
    } else {
      resolve();
    }
  });
}

// Show only the intervals of the resources that are polled.
function resourcesChange(newValue) {
  var has = function (r) { return newValue.indexOf(r) >= 0; };
  utils.set("calls_interval_seconds", { visible: has("calls") });
  utils.set("open_calls_interval_seconds", { visible: has("calls") });
  utils.set("metrics_interval_seconds", { visible: has("call_metrics") });
  utils.set("metrics_lookback_minutes", { visible: has("call_metrics") });
  utils.set("users_interval_seconds", { visible: has("users") });
  utils.set("user_statuses_interval_seconds", { visible: has("user_statuses") });
  utils.set("teams_interval_seconds", { visible: has("teams") });
  return newValue.length > 0 ? "" : "Select at least one resource";
}
