// fields.js gives the installation page's fields to the change callbacks of
// iparams.js: utils.get and utils.set, with the value of each iparam type read and
// written as the spec says. setup.js (loaded next) runs the callbacks, the checks
// and INSTALL through window.callbusSetup.
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

  function boxes(p) { return Array.prototype.slice.call(control(p).querySelectorAll("input[type=checkbox]")); }

  function getValue(p) {
    switch (p.decl.type) {
      case "checkbox": return control(p).checked;
      case "multiselect": return boxes(p).filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
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
        boxes(p).forEach(function (b) { b.checked = v.indexOf(b.value) >= 0; });
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
      case "multiselect": boxes(p).forEach(function (b) { b.checked = false; }); return;
      case "radio": radios(p).forEach(function (r) { r.checked = false; }); return;
      default: control(p).value = "";
    }
  }

  // readable turns an option id such as "call_metrics" into "Call metrics", as the
  // server renders a multiselect's checkboxes.
  function readable(id) {
    var s = id.replace(/_/g, " ");
    return s.charAt(0).toUpperCase() + s.slice(1);
  }

  // choice is one radio button or multiselect checkbox with its label.
  function choice(p, type, v, checked) {
    var label = document.createElement("label");
    var input = document.createElement("input");
    input.type = type;
    input.name = p.decl.key;
    input.value = v;
    input.checked = checked;
    label.appendChild(input);
    if (type === "checkbox") { label.title = v; }
    label.appendChild(document.createTextNode(" " + (type === "checkbox" ? readable(v) : v)));
    return label;
  }

  // setOptions replaces the options of a radio, dropdown or multiselect, keeping
  // the selection where it still exists.
  function setOptions(p, values) {
    var current = getValue(p);
    var el = control(p);
    var keep = function (v) { return Array.isArray(current) ? current.indexOf(v) >= 0 : current === v; };
    if (p.decl.type !== "dropdown") {
      el.textContent = "";
      values.forEach(function (v) {
        el.appendChild(choice(p, p.decl.type === "radio" ? "radio" : "checkbox", v, keep(v)));
      });
      return;
    }
    var blank = el.options.length > 0 && el.options[0].value === "";
    el.textContent = "";
    if (blank) {
      el.appendChild(new Option("(none)", ""));
    }
    values.forEach(function (v) { el.appendChild(new Option(v, v, false, keep(v))); });
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

  window.callbusSetup = {
    state: state, form: form, params: params, param: param, control: control,
    inputs: inputs, getValue: getValue, clearValue: clearValue, render: render
  };
}());
