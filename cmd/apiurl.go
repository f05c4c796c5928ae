/*
Copyright 2026 The eval-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// redactedPart replaces whatever of a URL may be a credential.
const redactedPart = "redacted"

// redactURL returns raw fit for logs and errors: user info and every query
// value (a token in ?key=...) are replaced. A URL that does not parse is
// withheld whole, as any part of it may be a credential.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "[unparsable URL " + redactedPart + "]"
	}
	if u.User != nil {
		u.User = url.User(redactedPart)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{redactedPart}
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// checkAPIURL checks --api-url: an http or https URL with a host, and plain
// http only to this machine (loopback) unless insecure is allowed, since the
// API keys travel in its requests' headers. Its errors hold the URL redacted.
func checkAPIURL(raw string, allowInsecure bool) error {
	if err := checkURLForm("--api-url", raw); err != nil {
		return err
	}
	if u, _ := url.Parse(raw); u.Scheme == "http" && !allowInsecure && !isLoopback(u.Hostname()) {
		return fmt.Errorf("--api-url %q: plain http would send the API keys unencrypted over the network; "+
			"use https, or pass --allow-insecure-api-url", redactURL(raw))
	}
	return nil
}

// checkURLForm checks that flag's value raw is a base URL: http or https,
// a host, no query or fragment.
func checkURLForm(flag, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %q: want an http or https URL such as https://eval.example.com/api/v2", flag, redactURL(raw))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%s %q: must not have a query or fragment", flag, redactURL(raw))
	}
	return nil
}

// isLoopback reports whether host names this machine: localhost or a
// loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
