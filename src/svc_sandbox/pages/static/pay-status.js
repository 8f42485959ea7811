// A waiting payment page (the payment link, the provider's page): while a prompt is out, polls
// the session (GET {base_url}/checkout/{id}, which also checks the provider, as every poll does)
// and reloads the page once the prompt is decided. Without JavaScript the page says to press
// Refresh (no automatic refresh the buyer cannot stop: WCAG 2.2.1).
// A buyer typing in the page's retry form keeps what they typed: the page then says the prompt
// was answered and links the result, instead of reloading under their hands.
(function () {
  "use strict";
  var state = document.getElementById("state");
  if (!state || !state.dataset.poll) { return; }
  var page = state.dataset.payUrl;
  function later(ms) { window.setTimeout(check, ms); }
  function typing() {
    var fields = document.querySelectorAll("form input:not([type=hidden]), form select, form textarea");
    for (var i = 0; i < fields.length; i++) {
      var field = fields[i];
      var changed = (field.type === "radio" || field.type === "checkbox")
        ? field.checked !== field.defaultChecked
        : field.value !== field.defaultValue;
      if (changed || field === document.activeElement) { return true; }
    }
    return false;
  }
  function tell() {
    if (document.getElementById("decided")) { return; }
    var note = document.createElement("p");
    note.id = "decided";
    note.setAttribute("role", "status");
    note.appendChild(document.createTextNode("The payment prompt was answered. "));
    var link = document.createElement("a");
    link.href = page;
    link.textContent = "See the result";
    note.appendChild(link);
    state.appendChild(note);
  }
  function reload() {
    if (typing()) { tell(); } else { window.location.replace(page); }
  }
  // The poll of a session that is no payment link has no `attempt` (spec §2: payment links
  // only): the page itself says whether its prompt is still out.
  function askThePage() {
    return fetch(page, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        var now = html && new DOMParser().parseFromString(html, "text/html").getElementById("state");
        if (!now) { later(3000); }
        else if (now.dataset.state === state.dataset.state) { later(1500); }
        else { reload(); }
      });
  }
  function check() {
    fetch(state.dataset.poll, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (body) {
        if (!body) { later(3000); }
        else if (body.status !== "open") { reload(); }
        else if (body.attempt) {
          if (body.attempt.inFlight) { later(1500); } else { reload(); }
        }
        else { return askThePage(); }
      })
      .catch(function () { later(3000); });
  }
  later(1500);
})();
