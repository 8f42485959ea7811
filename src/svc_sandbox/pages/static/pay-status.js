// Payment link: while a prompt is out, polls the session (GET {base_url}/checkout/{id}) and
// reloads the page once the prompt is decided. Without JavaScript, a <noscript> refresh does it.
(function () {
  "use strict";
  var state = document.getElementById("state");
  if (!state || !state.dataset.poll) { return; }
  function check() {
    fetch(state.dataset.poll, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (body) {
        var waiting = body && body.status === "open" && body.attempt && body.attempt.inFlight;
        if (body && !waiting) { window.location.replace(state.dataset.payUrl); }
        else { window.setTimeout(check, 1500); }
      })
      .catch(function () { window.setTimeout(check, 3000); });
  }
  window.setTimeout(check, 1500);
})();
