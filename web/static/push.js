// The inbox's "Notify me". It registers Assent's service worker,
// subscribes this browser to push notifications with the instance's VAPID
// public key and posts the subscription (its endpoint and keys) to the
// app; "Stop notifying me" removes it. Without JavaScript, or in a browser
// without the Push API, the control stays hidden.
(function () {
  "use strict";
  var box = document.getElementById("push");
  if (!box || !("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window) || !window.fetch) {
    return;
  }
  var button = document.getElementById("push-toggle");
  var status = document.getElementById("push-status");
  var key = keyBytes(box.getAttribute("data-key"));
  var csrf = box.getAttribute("data-csrf");
  var worker = "/push-worker.js";
  var on = false;

  function keyBytes(s) {
    var b64 = s.replace(/-/g, "+").replace(/_/g, "/");
    while (b64.length % 4) {
      b64 += "=";
    }
    var raw = atob(b64);
    var out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) {
      out[i] = raw.charCodeAt(i);
    }
    return out;
  }

  function sameKey(buffer) {
    if (!buffer) {
      return false;
    }
    var got = new Uint8Array(buffer);
    return got.length === key.length && got.every(function (b, i) { return b === key[i]; });
  }

  function post(path, fields) {
    var body = new URLSearchParams(fields);
    body.set("csrf", csrf);
    return fetch(path, { method: "POST", body: body, credentials: "same-origin" }).then(function (r) {
      if (!r.ok) {
        throw new Error("the server answered " + r.status);
      }
      return r;
    });
  }

  function show(state, text) {
    on = state;
    box.setAttribute("data-state", state ? "on" : "off");
    button.textContent = state ? "Stop notifying me" : "Notify me";
    button.setAttribute("aria-pressed", state ? "true" : "false");
    status.textContent = text || "";
  }

  function subscription() {
    return navigator.serviceWorker.getRegistration("/").then(function (reg) {
      return reg ? reg.pushManager.getSubscription() : null;
    });
  }

  function turnOn() {
    // Both start within the click: browsers ask for permission only then.
    var asked = Notification.requestPermission();
    var registered = navigator.serviceWorker.register(worker, { scope: "/" });
    return Promise.all([asked, registered]).then(function (r) {
      if (r[0] !== "granted") {
        throw new Error("this browser blocks notifications from this site; allow them in its settings");
      }
      return navigator.serviceWorker.ready;
    }).then(function (reg) {
      return reg.pushManager.getSubscription().then(function (old) {
        // A subscription made with another key cannot receive our pushes.
        if (old && !sameKey(old.options.applicationServerKey)) {
          return old.unsubscribe().then(function () { return null; });
        }
        return old;
      }).then(function (old) {
        return old || reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
      });
    }).then(function (sub) {
      var s = sub.toJSON();
      return post("/push/subscriptions", { endpoint: s.endpoint, p256dh: s.keys.p256dh, auth: s.keys.auth });
    }).then(function () {
      show(true, "This browser is notified when a request waits on you.");
    });
  }

  function turnOff() {
    return subscription().then(function (sub) {
      if (!sub) {
        return null;
      }
      return post("/push/subscriptions/delete", { endpoint: sub.endpoint }).then(function () {
        return sub.unsubscribe();
      });
    }).then(function () {
      show(false, "This browser is no longer notified.");
    });
  }

  button.addEventListener("click", function () {
    button.disabled = true;
    var was = on;
    (was ? turnOff() : turnOn()).catch(function (err) {
      show(was, "Could not turn notifications " + (was ? "off" : "on") + ": " + err.message);
    }).then(function () {
      button.disabled = false;
    });
  });

  // This browser may be subscribed already, for this person or for
  // someone who used it before.
  subscription().then(function (sub) {
    if (!sub) {
      return false;
    }
    return post("/push/subscriptions/status", { endpoint: sub.endpoint }).then(function (r) {
      return r.json();
    }).then(function (j) {
      return j.subscribed === true;
    });
  }).catch(function () {
    return false;
  }).then(function (state) {
    show(state, "");
    box.hidden = false;
  });
})();
