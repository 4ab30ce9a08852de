// setup.js runs the installation page: utils.get and utils.set for the change
// callbacks of iparams.js, the callbacks' return rules, the page-side checks
// (required, number bounds, regex) and INSTALL. The server checks everything again.
(function () {
  "use strict";

  var state = JSON.parse(document.getElementById("iparams-state").textContent);
  var form = document.getElementById("iparams");
  var params = {};

  state.params.forEach(function (decl) {
    params[decl.key] = {
      decl: decl,
      box: form.querySelector('.field[data-key="' + decl.key + '"]'),
      required: decl.required,
      min: decl.min,
      max: decl.max,
      error: "",          // from the change callback
      checkErrors: [],    // from the page's checks or the server
      pending: null,      // the callback's promise, while it runs
      seq: 0              // ignores the outcome of a superseded callback run
    };
  });

  function param(key) {
    if (!Object.prototype.hasOwnProperty.call(params, key)) {
      throw new Error('no installation parameter matches the key "' + key + '"');
    }
    return params[key];
  }

  function control(p) { return document.getElementById("f-" + p.decl.key); }

  function radios(p) { return Array.prototype.slice.call(control(p).querySelectorAll("input[type=radio]")); }

  function options(p) { return Array.prototype.slice.call(control(p).options); }

  function getValue(p) {
    switch (p.decl.type) {
      case "checkbox": return control(p).checked;
      case "multiselect": return options(p).filter(function (o) { return o.selected; }).map(function (o) { return o.value; });
      case "radio":
        var checked = radios(p).filter(function (r) { return r.checked; })[0];
        return checked ? checked.value : "";
      default: return control(p).value;
    }
  }

  function need(ok, p, attr, what) {
    if (!ok) {
      throw new TypeError("utils.set(\"" + p.decl.key + "\"): " + attr + " must be " + what);
    }
  }

  function isStringArray(v) {
    return Array.isArray(v) && v.every(function (s) { return typeof s === "string"; });
  }

  function setValue(p, v) {
    switch (p.decl.type) {
      case "checkbox":
        need(typeof v === "boolean", p, "value", "a boolean for a checkbox");
        control(p).checked = v;
        return;
      case "multiselect":
        need(isStringArray(v), p, "value", "an array of strings for a multiselect");
        options(p).forEach(function (o) { o.selected = v.indexOf(o.value) >= 0; });
        return;
      case "radio":
        need(typeof v === "string", p, "value", "a string");
        radios(p).forEach(function (r) { r.checked = r.value === v; });
        return;
      case "number":
        need(typeof v === "string" || typeof v === "number", p, "value", "a string or a number");
        control(p).value = String(v);
        return;
      default:
        need(typeof v === "string", p, "value", "a string");
        control(p).value = v;
    }
  }

  function clearValue(p) {
    switch (p.decl.type) {
      case "checkbox": control(p).checked = false; return;
      case "multiselect": options(p).forEach(function (o) { o.selected = false; }); return;
      case "radio": radios(p).forEach(function (r) { r.checked = false; }); return;
      default: control(p).value = "";
    }
  }

  // setOptions replaces the options of a radio, dropdown or multiselect, keeping
  // the selection where it still exists.
  function setOptions(p, values) {
    var current = getValue(p);
    var el = control(p);
    var keep = function (v) { return Array.isArray(current) ? current.indexOf(v) >= 0 : current === v; };
    if (p.decl.type === "radio") {
      el.textContent = "";
      values.forEach(function (v) {
        var label = document.createElement("label");
        var input = document.createElement("input");
        input.type = "radio";
        input.name = p.decl.key;
        input.value = v;
        input.checked = keep(v);
        label.appendChild(input);
        label.appendChild(document.createTextNode(" " + v));
        el.appendChild(label);
      });
      return;
    }
    var blank = p.decl.type === "dropdown" && el.options.length > 0 && el.options[0].value === "";
    el.textContent = "";
    if (blank) {
      el.appendChild(new Option("(none)", ""));
    }
    values.forEach(function (v) { el.appendChild(new Option(v, v, false, keep(v))); });
    if (p.decl.type === "multiselect") {
      el.size = values.length;
    }
  }

  function inputs(p) {
    return Array.prototype.slice.call(p.box.querySelectorAll("input, select, textarea"));
  }

  var setters = {
    value: function (p, v) { setValue(p, v); },
    label: function (p, v) {
      need(typeof v === "string", p, "label", "a string");
      p.box.querySelector(".label .text").textContent = v;
    },
    visible: function (p, v) {
      need(typeof v === "boolean", p, "visible", "a boolean");
      p.box.hidden = !v;
    },
    disabled: function (p, v) {
      need(typeof v === "boolean", p, "disabled", "a boolean");
      inputs(p).forEach(function (el) { el.disabled = v; });
      p.box.classList.toggle("disabled", v);
    },
    required: function (p, v) {
      need(typeof v === "boolean", p, "required", "a boolean");
      p.required = v;
      p.box.querySelector(".req").hidden = !v;
    },
    hint: function (p, v) {
      need(typeof v === "string", p, "hint", "a string");
      document.getElementById("h-" + p.decl.key).textContent = v;
    },
    values: function (p, v) {
      need(["radio", "dropdown", "multiselect"].indexOf(p.decl.type) >= 0, p, "values", "set on a radio, dropdown or multiselect only");
      need(isStringArray(v), p, "values", "an array of strings");
      setOptions(p, v);
    },
    min: function (p, v) {
      need(p.decl.type === "number", p, "min", "set on a number only");
      need(typeof v === "number" && isFinite(v), p, "min", "a number");
      p.min = v;
      control(p).min = String(v);
    },
    max: function (p, v) {
      need(p.decl.type === "number", p, "max", "set on a number only");
      need(typeof v === "number" && isFinite(v), p, "max", "a number");
      p.max = v;
      control(p).max = String(v);
    }
  };

  window.utils = {
    // get returns the current value of a field: a string, an array of strings for
    // a multiselect, a boolean for a checkbox. Secure fields read as "".
    get: function (key) {
      var p = param(key);
      return p.decl.secure ? "" : getValue(p);
    },
    // set changes attributes of a field; each must have its attribute's type.
    set: function (key, attrs) {
      var p = param(key);
      if (!attrs || typeof attrs !== "object") {
        throw new TypeError("utils.set(\"" + key + "\"): give an object of attributes");
      }
      Object.keys(attrs).forEach(function (name) {
        if (!Object.prototype.hasOwnProperty.call(setters, name)) {
          throw new TypeError("utils.set(\"" + key + "\"): unknown attribute " + name);
        }
        setters[name](p, attrs[name]);
      });
    }
  };

  function render(p) {
    var messages = (p.error ? [p.error] : []).concat(p.checkErrors);
    document.getElementById("e-" + p.decl.key).textContent = messages.join(" · ");
    p.box.classList.toggle("invalid", messages.length > 0);
  }

  function message(e) {
    if (typeof e === "string") { return e; }
    if (e && typeof e.message === "string") { return e.message; }
    return "";
  }

  // lookup finds a callback among iparams.js's top-level functions, whether
  // declared with function or bound with const/let/var. The name is an identifier
  // (the server checked the declaration).
  function lookup(name) {
    try {
      return new Function("return typeof " + name + ' === "function" ? ' + name + " : undefined;")();
    } catch (e) {
      return undefined;
    }
  }

  // runCallback applies the spec's return rules: a non-empty string is an error
  // and clears the value; "" or nothing passes; a promise passes when it resolves
  // and fails with the message it rejects with. On page load (initial) errors are
  // shown but the saved value is kept.
  function runCallback(p, initial) {
    var name = p.decl.change;
    p.checkErrors = [];
    if (!name) { render(p); return; }
    var seq = ++p.seq;
    var fail = function (msg) {
      p.error = msg;
      if (!initial) { clearValue(p); }
      render(p);
    };
    var pass = function () { p.error = ""; render(p); };
    var fn = lookup(name);
    if (typeof fn !== "function") {
      p.error = "The change callback " + name + " is not defined in iparams.js";
      render(p);
      return;
    }
    var result;
    try {
      result = fn(getValue(p));
    } catch (e) {
      p.error = "The change callback " + name + " failed: " + message(e);
      render(p);
      return;
    }
    if (result && typeof result.then === "function") {
      p.pending = Promise.resolve(result).then(function () {
        if (seq === p.seq) { pass(); }
      }, function (err) {
        if (seq === p.seq) { fail(message(err) || "Invalid value"); }
      }).then(function () {
        if (seq === p.seq) { p.pending = null; }
      });
      return;
    }
    if (typeof result === "string" && result !== "") { fail(result); } else { pass(); }
  }

  // active lists the fields INSTALL sends: shown and not disabled, as a browser
  // submits a form.
  function active() {
    return Object.keys(params).map(function (k) { return params[k]; }).filter(function (p) {
      var els = inputs(p);
      return !p.box.hidden && !(els.length > 0 && els.every(function (el) { return el.disabled; }));
    });
  }

  function isEmpty(p, v) {
    if (p.decl.secure && p.decl.secureSet && v === "") { return false; } // the saved value is kept
    if (Array.isArray(v)) { return v.length === 0; }
    return v === "" || v === false;
  }

  // check applies the rules the page knows: required and bounds as utils.set left
  // them, the integer form, and the regex rules.
  function check(p) {
    var v = getValue(p);
    var errs = [];
    if (isEmpty(p, v)) {
      if (p.required) { errs.push(p.decl.type === "checkbox" ? "required: must be checked" : "required"); }
      return errs;
    }
    if (p.decl.type === "number") {
      if (!/^\s*[+-]?\d{1,10}\s*$/.test(v)) {
        errs.push("must be an integer of at most 10 digits");
      } else {
        var n = Number(v);
        if (p.min !== null && n < p.min) { errs.push("must be at least " + p.min); }
        if (p.max !== null && n > p.max) { errs.push("must be at most " + p.max); }
      }
    }
    var items = Array.isArray(v) ? v : [String(v).trim()];
    if (p.decl.secure && v === "") { items = []; }
    p.decl.regex.forEach(function (r) {
      var re;
      try { re = new RegExp(r.pattern); } catch (e) { return; } // the server checks it
      if (items.some(function (item) { return !re.test(item); })) { errs.push(r.message); }
    });
    return errs;
  }

  function collect(p) {
    var v = getValue(p);
    return typeof v === "string" && p.decl.type !== "paragraph" ? v.trim() : v;
  }

  var formErrors = document.getElementById("form-errors");
  var result = document.getElementById("result");
  var button = document.getElementById("install");

  function showServerErrors(errors) {
    var general = [];
    Object.keys(errors).forEach(function (key) {
      var p = params[key];
      if (p && !p.box.hidden) {
        p.checkErrors = errors[key];
        render(p);
      } else {
        general.push((key ? key + ": " : "") + errors[key].join(" · "));
      }
    });
    formErrors.textContent = general.length ? general.join("\n") : "Correct the highlighted fields.";
  }

  function install() {
    formErrors.textContent = "";
    result.textContent = "";
    result.className = "";
    var fields = active();
    var pending = fields.map(function (p) { return p.pending; }).filter(Boolean);
    button.disabled = true;
    Promise.all(pending).then(function () {
      var values = {};
      var bad = false;
      fields.forEach(function (p) {
        p.checkErrors = check(p);
        render(p);
        if (p.error || p.checkErrors.length) { bad = true; }
        var v = collect(p);
        if (!(p.decl.secure && v === "")) { values[p.decl.key] = v; }
      });
      if (bad) {
        formErrors.textContent = "Correct the highlighted fields.";
        return null;
      }
      return fetch(state.installURL, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Accept": "application/json" },
        body: JSON.stringify({ values: values })
      }).then(function (resp) {
        return resp.json().then(function (body) { return { status: resp.status, body: body }; });
      }).then(function (r) {
        if (r.status === 200) {
          result.textContent = r.body.message;
          result.className = "ok";
          fields.forEach(function (p) {
            if (p.decl.secure && control(p).value !== "") {
              control(p).value = "";
              p.decl.secureSet = true;
              control(p).placeholder = "set: leave empty to keep the saved value";
            }
          });
        } else if (r.body.errors) {
          showServerErrors(r.body.errors);
        } else {
          formErrors.textContent = r.body.message || "INSTALL failed with status " + r.status;
        }
      });
    }).catch(function (e) {
      formErrors.textContent = "INSTALL failed: " + message(e);
    }).then(function () {
      button.disabled = false;
    });
  }

  Object.keys(params).forEach(function (key) {
    var p = params[key];
    p.box.addEventListener("change", function () {
      runCallback(p, false);
      if (!p.error) { // bounds and regex at once; required waits for INSTALL
        p.checkErrors = check(p).filter(function (m) { return m.indexOf("required") !== 0; });
        render(p);
      }
    });
  });
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    install();
  });

  // Callbacks run once on load for the fields that have a value, so that the
  // page starts in the state the values imply (e.g. which fields are shown).
  Object.keys(params).forEach(function (key) {
    var p = params[key];
    var v = getValue(p);
    if (p.decl.change && !p.decl.secure && !(Array.isArray(v) ? v.length === 0 : v === "" || v === false)) {
      runCallback(p, true);
    }
  });
  document.documentElement.setAttribute("data-ready", "true");
}());
