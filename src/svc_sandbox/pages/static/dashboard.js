// svc-sandbox dashboard: sends its forms as same-origin JSON to the control plane, and keeps
// the live parts of the page ([data-live] elements) fresh by polling the page itself.
// An action's message goes to the <output> beside its button or, for a button inside a live
// part, to the status area its form names (data-status), outside that part: the refresh never
// re-renders a message, which stays until the next action. A form with data-confirm (the
// destructive ones) asks first; cancelled, nothing is sent. A form with data-shows names that
// field of the answer in its message (a new token, a rotated secret).
(function () {
  "use strict";
  var REFRESH_MS = 2000;

  function fieldsOf(form) {
    var body = {};
    Array.prototype.forEach.call(form.elements, function (input) {
      if (!input.name || input.disabled) { return; }
      var value = input.value.trim();
      if (value === "") { return; }
      // A number input is sent as a JSON number (the control plane's amounts are strict
      // integers); what is not a number goes as typed, so the refusal names the field.
      body[input.name] = input.type === "number" && isFinite(value) ? Number(value) : value;
    });
    return body;
  }

  function clearErrors(form) {
    form.querySelectorAll(".field-error").forEach(function (node) { node.remove(); });
    form.querySelectorAll("[aria-invalid]").forEach(function (input) {
      input.removeAttribute("aria-invalid");
      input.setAttribute("aria-describedby", input.dataset.describedby || "");
    });
  }

  // The control plane's messages start with the field they are about ("duration must ...").
  function showError(form, message) {
    var name = message.split(" ")[0];
    var input = form.querySelector("[name='" + name + "']:not([type=hidden])");
    if (!input) { return false; }
    var note = document.createElement("p");
    note.className = "field-error";
    note.id = input.id + "-error";
    note.textContent = message;
    input.insertAdjacentElement("afterend", note);
    input.dataset.describedby = input.getAttribute("aria-describedby") || "";
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-describedby", note.id);
    input.focus();
    return true;
  }

  function showRan(body) {
    var list = document.getElementById("ran");
    if (!list || !body || !body.ran) { return; }
    list.textContent = "";
    if (body.ran.length === 0) {
      var none = document.createElement("li");
      none.textContent = "Nothing was due; the clock is now " + body.clock.now + ".";
      list.appendChild(none);
    }
    body.ran.forEach(function (entry) {
      var item = document.createElement("li");
      item.textContent = entry.due + " " + entry.kind + " " + JSON.stringify(entry.payload);
      list.appendChild(item);
    });
  }

  // Shows text ("" clears it) in an action's message area; kind is "ok" or "error". A
  // status area (a block above a live part) is boxed; an <output> beside a button is not.
  function say(output, text, kind) {
    var boxed = output.tagName !== "OUTPUT";
    output.textContent = text;
    output.className = "api-result";
    if (text && boxed) { output.classList.add("state"); }
    if (kind) { output.classList.add(kind === "ok" ? "ok" : boxed ? "error" : "field-error"); }
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList.contains("api")) { return; }
    event.preventDefault();
    // Sent once until it is answered: a double click funded twice and moved the clock twice.
    if (form.dataset.busy) { return; }
    if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) { return; }
    form.dataset.busy = "1";
    var output = form.dataset.status ? document.getElementById(form.dataset.status)
      : form.querySelector(".api-result");
    // The label may hold a typed name (an organization's): isolated (FSI ... PDI), so a
    // direction override in it cannot turn the message that follows around.
    var about = form.dataset.label ? "\u2068" + form.dataset.label + "\u2069: " : "";
    clearErrors(form);
    document.querySelectorAll(".api-result").forEach(function (node) { say(node, ""); });
    if (output) { say(output, "…"); }
    fetch(form.dataset.url, {
      method: form.dataset.method || "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      credentials: "same-origin",
      body: JSON.stringify(fieldsOf(form))
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (response.ok) {
          var shown = form.dataset.shows && body[form.dataset.shows];
          var done = shown ? "Done. " + form.dataset.showsAs + ": " + shown : "Done.";
          if (output) { say(output, about + done, "ok"); }
          showRan(body);
          refresh();
        } else {
          var message = body.error || ("Request failed (" + response.status + ")");
          if (!showError(form, message) && output) {
            say(output, about + message, "error");
          } else if (output) { say(output, ""); }
        }
      });
    }).catch(function () {
      if (output) { say(output, about + "The sandbox did not answer.", "error"); }
    }).then(function () { delete form.dataset.busy; });
  });

  // A control's identity across a refresh: the same control in the fresh HTML has the same key.
  function keyOf(control) {
    var form = control.closest("form");
    return [control.tagName, control.id, control.getAttribute("href"), control.name,
      form && form.dataset.url, control.textContent.trim()].join(" ");
  }

  // The heading a live part sits under (the nearest one before it).
  function headingOf(node) {
    for (var el = node; el; el = el.previousElementSibling || el.parentElement) {
      if (/^H[1-6]$/.test(el.tagName)) { return el; }
    }
    return document.querySelector("h1");
  }

  // After a live part was re-rendered under the keyboard: focus goes back to the same control,
  // or, when it is gone (a token just revoked), to the part's heading, never to the page.
  function refocus(node, key) {
    var same = Array.prototype.find.call(node.querySelectorAll("a[href], button, summary"),
      function (control) { return keyOf(control) === key; });
    var target = same || headingOf(node);
    if (!target) { return; }
    if (!same) { target.setAttribute("tabindex", "-1"); }
    target.focus();
  }

  // When the page's own address stops answering it, the page says so at its top: a record
  // gone (404: the sandbox was reset, or another state imported) ends the polling and its
  // buttons (they would act on nothing); svc-sandbox not answering, or another error, is
  // said until it answers again.
  var GONE = "This page is gone: svc-sandbox now answers 404 for it (the sandbox was reset, " +
    "or another state imported). Its buttons are off; go back to the section's list.";
  function sayStale(text) {
    var note = document.getElementById("page-stale");
    if (!note) {
      note = document.createElement("p");
      note.id = "page-stale";
      note.className = "state error";
      note.setAttribute("role", "alert");
      var main = document.querySelector("main") || document.body;
      main.insertBefore(note, main.firstChild);
    }
    if (note.textContent !== text) { note.textContent = text; }
  }
  function clearStale() {
    var note = document.getElementById("page-stale");
    if (note) { note.remove(); }
  }
  var timer = null;
  function pageGone() {
    sayStale(GONE);
    window.clearInterval(timer);
    document.querySelectorAll("main form button").forEach(function (button) {
      button.disabled = true;
    });
  }

  var busy = false;
  var again = false; // asked for while a refresh was under way (an action just done)
  function refresh() {
    if (busy) { again = true; return; }
    if (document.hidden) { return; }
    busy = true;
    fetch(window.location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (response) {
        if (response.ok) { clearStale(); return response.text(); }
        if (response.status === 404) { pageGone(); return null; }
        sayStale("svc-sandbox answered " + response.status + " for this page: what it shows " +
          "may be out of date.");
        return null;
      }, function () {
        sayStale("svc-sandbox is not answering: this page shows what it last said.");
        return null;
      })
      .then(function (text) {
        if (text === null) { return; }
        var fresh = new DOMParser().parseFromString(text, "text/html");
        var active = document.activeElement;
        document.querySelectorAll("[data-live][id]").forEach(function (node) {
          var next = fresh.getElementById(node.id);
          if (!next || next.innerHTML === node.innerHTML) { return; }
          var focused = node.contains(active) ? active : null;
          // A part the person is typing in is left alone until they leave it.
          if (focused && focused.matches("input, select, textarea")) { return; }
          var key = focused && keyOf(focused);
          // Disclosures someone opened (a request's details) stay open across the refresh.
          var opened = Array.prototype.map.call(node.querySelectorAll("details[open][id]"),
            function (details) { return details.id; });
          node.innerHTML = next.innerHTML;
          opened.forEach(function (id) {
            var details = document.getElementById(id);
            if (details) { details.open = true; }
          });
          if (focused) { refocus(node, key); }
        });
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }
  // A page that is itself a refusal (a filter the sandbox refused, answered 400) has nothing
  // to refresh: polling it only met its own 400 and called the page out of date.
  if (!document.querySelector("[data-no-refresh]")) {
    timer = window.setInterval(refresh, REFRESH_MS);
  }
})();
