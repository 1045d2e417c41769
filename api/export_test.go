package api

// UnencodedSlug lets the contract check route a slug as the server does.
var UnencodedSlug = unencodedSlug
