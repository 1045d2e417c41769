package assent

// Observe calls f with each answer c receives (the tour test reads them
// against the document).
func Observe(c *Client, f func(op string, status int, body []byte)) { c.observe = f }
