// A payment page's form (payment link, product, provider and simulator pages) is sent once: a
// second press while the page is leaving (a double click on Pay) is dropped, where it sent the
// same attempt again and the buyer landed on its 409 ("A payment prompt is already out"). The
// pressed button is not disabled: its name and value (the simulator's failure code) must still
// be sent. A page shown again from the browser's back/forward cache takes a press again.
//
// A page of a session's live state (body[data-page]) shown from history is fetched again:
// Back after paying brought the open Pay form of a paid session (from the back/forward cache,
// or the page of a refused form, which is a POST's answer the browser keeps).
(function () {
  "use strict";
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.dataset.sent) { event.preventDefault(); return; }
    form.dataset.sent = "1";
  });
  window.addEventListener("pageshow", function (event) {
    var live = document.body.dataset.page;
    var entry = window.performance && performance.getEntriesByType
      ? performance.getEntriesByType("navigation")[0] : null;
    var fromHistory = entry && entry.type === "back_forward" && "posted" in document.body.dataset;
    if (live && (event.persisted || fromHistory)) { window.location.replace(live); return; }
    if (!event.persisted) { return; }
    var forms = document.querySelectorAll("form[data-sent]");
    for (var i = 0; i < forms.length; i++) { delete forms[i].dataset.sent; }
  });
})();
