// svc-sandbox dashboard: sends its forms as same-origin JSON to the control plane, and keeps
// the live parts of the page ([data-live] elements) fresh by polling the page itself.
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

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList.contains("api")) { return; }
    event.preventDefault();
    var output = form.querySelector(".api-result");
    clearErrors(form);
    if (output) { output.textContent = "…"; output.className = "api-result"; }
    fetch(form.dataset.url, {
      method: form.dataset.method || "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      credentials: "same-origin",
      body: JSON.stringify(fieldsOf(form))
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (response.ok) {
          if (output) { output.textContent = "Done."; output.classList.add("ok"); }
          showRan(body);
          refresh();
        } else {
          var message = body.error || ("Request failed (" + response.status + ")");
          if (!showError(form, message) && output) {
            output.textContent = message;
            output.classList.add("field-error");
          } else if (output) { output.textContent = ""; }
        }
      });
    }).catch(function () {
      if (output) { output.textContent = "The sandbox did not answer."; output.classList.add("field-error"); }
    });
  });

  var busy = false;
  function refresh() {
    if (busy || document.hidden) { return; }
    busy = true;
    fetch(window.location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (text) {
        if (text === null) { return; }
        var fresh = new DOMParser().parseFromString(text, "text/html");
        var active = document.activeElement;
        var typing = active && active.matches("input, select, textarea") ? active : null;
        document.querySelectorAll("[data-live][id]").forEach(function (node) {
          var next = fresh.getElementById(node.id);
          if (next && next.innerHTML !== node.innerHTML && !(typing && node.contains(typing))) {
            node.innerHTML = next.innerHTML;
          }
        });
      })
      .catch(function () {})
      .then(function () { busy = false; });
  }
  window.setInterval(refresh, REFRESH_MS);
})();
