// The review page's one script. The framed report's selection script
// (served by the report's origin) posts what the reader selects there;
// this puts it, as text, in the comment form's quote. Messages from any
// other origin or window are ignored.
(function () {
  "use strict";
  var frame = document.querySelector("iframe[data-report-origin]");
  var quote = document.getElementById("quote");
  if (!frame || !quote) {
    return;
  }
  var origin = frame.getAttribute("data-report-origin");
  window.addEventListener("message", function (event) {
    if (event.origin !== origin || event.source !== frame.contentWindow) {
      return;
    }
    var data = event.data;
    if (!data || data.type !== "assent:selection" || typeof data.text !== "string") {
      return;
    }
    quote.value = data.text;
  });
})();
