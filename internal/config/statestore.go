package config

import "net/url"

// validStateStore reports whether s can name a state store: empty, or a redis:// or rediss://
// URL with a host.
func validStateStore(s string) bool {
	if s == "" {
		return true
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "redis" || u.Scheme == "rediss") && u.Host != ""
}

// maskURL is a state store's URL as a log may show it: its password (and a user name given
// alone, which Redis takes as a password) masked; a URL that does not parse is not shown.
func maskURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable)"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		} else {
			u.User = url.User("xxxxx")
		}
	}
	return u.String()
}
