// setup.js runs the installation page on the fields of fields.js: the change
// callbacks of iparams.js with the spec's return rules, the page-side checks
// (required, the number form and bounds, regex) and INSTALL. The server checks
// everything again and is the authority: the page never leaves out or replaces a
// value the user typed, so a value the server cannot take is refused by name.
(function () {
  "use strict";

  var cs = window.callbusSetup;
  var state = cs.state, form = cs.form, params = cs.params;
  var control = cs.control, getValue = cs.getValue, clearValue = cs.clearValue, render = cs.render;

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
    var asked = JSON.stringify(getValue(p));
    var fail = function (msg) {
      p.error = msg;
      // A slow answer about a value the user has since replaced (typed, not yet
      // changed) must not clear the new one: its change event asks again.
      if (!initial && JSON.stringify(getValue(p)) === asked) { clearValue(p); }
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

  function list() { return Object.keys(params).map(function (k) { return params[k]; }); }

  // shown tells whether a field can be seen once its section is open.
  function shown(p) { return !p.box.hidden; }

  // active lists the fields INSTALL sends: shown and not disabled, as a browser
  // submits a form.
  function active() {
    return list().filter(function (p) {
      var els = cs.inputs(p);
      return shown(p) && !(els.length > 0 && els.every(function (el) { return el.disabled; }));
    });
  }

  function isEmpty(p, v) {
    if (p.decl.secure && p.decl.secureSet && v === "") { return false; } // the saved value is kept
    if (Array.isArray(v)) { return v.length === 0; }
    return v === "" || v === false;
  }

  // numberError is the type's own rule for a number typed as text: an integer of
  // at most 10 digits. It quotes what was typed, so that the user sees it was kept.
  function numberError(p, v) {
    var s = String(v).trim();
    if (p.decl.type !== "number" || s === "") { return ""; }
    if (!/^[+-]?\d+$/.test(s)) {
      return p.decl.secure ? "must be a whole number" : "must be a whole number, not \u201c" + s + "\u201d";
    }
    return s.replace(/^[+-]/, "").length > 10 ? "must be an integer of at most 10 digits" : "";
  }

  // check applies the rules the page knows: required and bounds as utils.set left
  // them, the number form, and the regex rules.
  function check(p) {
    var v = getValue(p);
    var errs = [];
    if (isEmpty(p, v)) {
      if (p.required) { errs.push(p.decl.type === "checkbox" ? "required: must be checked" : "required"); }
      return errs;
    }
    var typeError = numberError(p, v);
    if (typeError) { return [typeError]; }
    if (p.decl.type === "number") {
      var n = Number(v);
      if (p.min !== null && n < p.min) { errs.push("must be at least " + p.min); }
      if (p.max !== null && n > p.max) { errs.push("must be at most " + p.max); }
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
  var general = []; // the problems of no shown field, as "Label: message"

  function labelOf(key) {
    var p = params[key];
    return p ? p.box.querySelector(".label .text").textContent : key;
  }

  function invalidFields() {
    return Array.prototype.slice.call(form.querySelectorAll(".field.invalid")).map(function (box) {
      return params[box.dataset.key];
    }).filter(function (p) { return p && shown(p); });
  }

  // reveal opens the section of a field, scrolls it near the top of the window
  // and puts the keyboard in it.
  function reveal(p) {
    var section = p.box.closest("details");
    if (section) { section.open = true; }
    var target = control(p);
    if (!/^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName)) { target = target.querySelector("input") || target; }
    p.box.scrollIntoView({ block: "start" }); // the top: INSTALL's bar covers the bottom
    target.focus({ preventScroll: true });
  }

  // showSummary lists every problem by field name next to INSTALL, each a link to
  // its field, and counts them on each section's title (a closed one included).
  function showSummary() {
    var bad = invalidFields();
    formErrors.textContent = "";
    Array.prototype.forEach.call(form.querySelectorAll(".group-errors"), function (el) { el.textContent = ""; });
    if (bad.length === 0 && general.length === 0) { return; }
    var counts = {};
    var ul = document.createElement("ul");
    bad.forEach(function (p) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = "#f-" + p.decl.key;
      a.textContent = labelOf(p.decl.key);
      a.addEventListener("click", function (ev) { ev.preventDefault(); reveal(p); });
      li.appendChild(a);
      li.appendChild(document.createTextNode(": " + document.getElementById("e-" + p.decl.key).textContent));
      ul.appendChild(li);
      var section = p.box.closest("details");
      section.open = true; // every highlighted field can be seen
      var group = section.dataset.group;
      counts[group] = (counts[group] || 0) + 1;
    });
    general.forEach(function (line) {
      var li = document.createElement("li");
      li.textContent = line;
      ul.appendChild(li);
    });
    var head = document.createElement("p");
    var n = bad.length + general.length;
    head.textContent = "Nothing was saved. Correct " + (n === 1 ? "this problem:" : "these " + n + " problems:");
    formErrors.appendChild(head);
    formErrors.appendChild(ul);
    Object.keys(counts).forEach(function (g) {
      document.getElementById("ge-" + g).textContent = counts[g] + " to correct";
    });
  }

  // keyNames matches the keys the server's messages name, longest first; only
  // those with a "_", which prose does not use ("account" is also a word).
  var keyNames = new RegExp("\\b(" + Object.keys(params).filter(function (k) {
    return k.indexOf("_") > 0;
  }).sort(function (a, b) {
    return b.length - a.length;
  }).join("|") + ")\\b", "g");

  // withLabels names the fields in a server message by their labels, as the page does.
  function withLabels(msg) {
    return msg.replace(keyNames, function (key) { return labelOf(key); });
  }

  // takeServerErrors shows the server's problems on their fields. A field the page
  // found wrong already keeps the page's message: the server's would repeat it.
  function takeServerErrors(errors) {
    Object.keys(errors).forEach(function (key) {
      var msgs = errors[key].map(withLabels);
      var p = params[key];
      if (p && shown(p)) {
        if (!p.error && p.checkErrors.length === 0) {
          p.checkErrors = msgs;
          render(p);
        }
      } else {
        general.push((key ? labelOf(key) + ": " : "") + msgs.join(" · "));
      }
    });
  }

  function post(url, values) {
    return fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify({ values: values })
    }).then(function (resp) {
      return resp.json().then(function (body) { return { status: resp.status, body: body }; });
    });
  }

  function saved(fields, message) {
    result.textContent = message;
    result.className = "ok";
    fields.forEach(function (p) {
      if (p.decl.secure && control(p).value !== "") {
        control(p).value = "";
        p.decl.secureSet = true;
        control(p).placeholder = "set: leave empty to keep the saved value";
      }
    });
  }

  // install checks every sent field on the page, then posts the values: to the
  // check endpoint when the page found problems (so that the server's own, such
  // as the rules between fields, are listed with them), else to INSTALL.
  function install() {
    general = [];
    showSummary();
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
      return post(bad ? state.checkURL : state.installURL, values).then(function (r) {
        if (r.status === 200 && !bad) {
          saved(fields, r.body.message);
          return;
        }
        if (r.body.errors) {
          takeServerErrors(r.body.errors);
        } else if (r.status !== 200) {
          general.push(r.body.message || "INSTALL failed with status " + r.status);
        }
        showSummary();
        var first = invalidFields()[0];
        if (first) { reveal(first); } else { formErrors.scrollIntoView({ block: "center" }); }
      });
    }).catch(function (e) {
      general.push("INSTALL failed: " + message(e));
      showSummary();
    }).then(function () {
      button.disabled = false;
    });
  }

  list().forEach(function (p) {
    p.box.addEventListener("change", function () {
      var typeError = numberError(p, getValue(p));
      if (typeError) { // the callback gets numbers only, as from a number input
        p.seq++;
        p.pending = null;
        p.error = "";
        p.checkErrors = [typeError];
        render(p);
      } else {
        runCallback(p, false);
        if (!p.error) { // bounds and regex at once; required waits for INSTALL
          p.checkErrors = check(p).filter(function (m) { return m.indexOf("required") !== 0; });
          render(p);
        }
      }
      if (formErrors.textContent !== "") { showSummary(); }
    });
  });
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    install();
  });

  // Callbacks run once on load for the fields that have a value, so that the
  // page starts in the state the values imply (e.g. which fields are shown).
  list().forEach(function (p) {
    var v = getValue(p);
    if (p.decl.change && !p.decl.secure && !(Array.isArray(v) ? v.length === 0 : v === "" || v === false)) {
      runCallback(p, true);
    }
  });
  document.documentElement.setAttribute("data-ready", "true");
}());
