// Assent's service worker, registered by the inbox's "Notify me". It shows
// each push Assent sends (a request's title, kind and risk, and its page)
// as a notification, and opens the page when the notification is clicked.
// It fetches nothing and caches nothing.
"use strict";

var kinds = { approval: "Approval", collection: "Request for information", review: "Review" };

// page is the path of a pushed page on this origin: never another site.
function page(url) {
  try {
    var u = new URL(url, self.location.origin);
    return new URL(u.pathname + u.search, self.location.origin).href;
  } catch (e) {
    return new URL("/inbox", self.location.origin).href;
  }
}

self.addEventListener("install", function () {
  self.skipWaiting();
});

self.addEventListener("push", function (event) {
  var data = {};
  try {
    data = (event.data && event.data.json()) || {};
  } catch (e) {
    data = {};
  }
  var title = typeof data.title === "string" && data.title ? data.title : "A request is waiting on you";
  var body = (kinds[data.kind] || "Request") + (data.risk ? " · " + data.risk + " risk" : "") + " · waiting on you";
  var url = page(typeof data.url === "string" ? data.url : "/inbox");
  event.waitUntil(self.registration.showNotification(title, { body: body, tag: url, data: { url: url } }));
});

self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  var url = page(event.notification.data && event.notification.data.url);
  event.waitUntil(self.clients.matchAll({ type: "window", includeUncontrolled: true }).then(function (open) {
    for (var i = 0; i < open.length; i++) {
      if (open[i].url === url && "focus" in open[i]) {
        return open[i].focus();
      }
    }
    return self.clients.openWindow(url);
  }));
});
