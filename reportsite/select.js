// Assent's selection script, added to every page of a report: it tells the
// app's review page, which frames the report, what the reader has
// selected, so a comment can quote it. It posts to the app's origin only,
// and does nothing else.
(function () {
  "use strict";
  var appOrigin = /*APP_ORIGIN*/"";
  var timer = 0;
  if (window.parent === window) {
    return;
  }
  function send() {
    timer = 0;
    var text = String(window.getSelection() || "").trim();
    // At most 1000 characters, never half of one.
    text = Array.from(text).slice(0, 1000).join("");
    window.parent.postMessage({type: "assent:selection", text: text}, appOrigin);
  }
  function soon() {
    clearTimeout(timer);
    timer = setTimeout(send, 150);
  }
  document.addEventListener("mouseup", soon);
  document.addEventListener("keyup", soon);
  document.addEventListener("selectionchange", soon);
})();
