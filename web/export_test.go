package web

// WaitForMail waits for sign-in emails still going out, so a test can read
// the mailbox right after the response.
func (p *Pages) WaitForMail() { p.sending.Wait() }
