// Starts the viewer on the document this server serves. A file of its
// own, because the page's Content-Security-Policy allows no inline script.
window.ui = SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  // The viewer must not send the document to a validator elsewhere.
  validatorUrl: null,
});
