package audit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ---- the control API's answers: the call journal and the fixture list (docs/fixtures.md) ----
//
// They are part of the responses source: answers of the service to the audit, read back once the
// traffic has been sent, and searched like the error bodies. A control read the target does not
// serve (404: --journal-entries 0, or a target without /_mock) is reported as unavailable and
// does not fail the audit; any other failure, or a journal that shows none of the audit's
// requests, does.

// controlRead is one read of the target's control API after the traffic.
type controlRead struct {
	label   string // "journal (scope audit-…)"
	path    string
	journal bool
	want    []*probe // the audit's requests it must show (a journal)
}

// controlReads are the reads for the audit's traffic: its scope's journal, the unscoped journal
// and its scope's fixture list.
func (t *traffic) controlReads(exp *expectation) []controlRead {
	if t.scope == "" {
		return nil
	}
	var scoped, unscoped []*probe
	for _, p := range exp.probes {
		// Every /v1 call is journaled under its scope; the audit's are told by request id.
		if p.RequestID == "" || !strings.HasPrefix(p.Path, "/v1/") {
			continue
		}
		switch p.Header.Get(headerScope) {
		case t.scope:
			scoped = append(scoped, p)
		case "":
			unscoped = append(unscoped, p)
		}
	}
	q := url.QueryEscape(t.scope)
	return []controlRead{
		{label: "journal (scope " + t.scope + ")", path: "/_mock/journal?scope=" + q + "&limit=1000", journal: true, want: scoped},
		{label: "journal (unscoped)", path: "/_mock/journal?limit=1000", journal: true, want: unscoped},
		{label: "fixture list (scope " + t.scope + ")", path: "/_mock/fixtures?scope=" + q},
	}
}

// readControl fetches one control read — a journal until it shows the audit's requests, or
// they stop arriving for a second, or the deadline — and adds its records to c.
func (t *traffic) readControl(ctx context.Context, deadline time.Time, rd controlRead, corr *correlator, c *collection) {
	u := t.base + rd.path
	var recs []record
	var seen map[string]int
	var body []byte
	var doc *jnode
	last, since := -1, time.Now()
	for {
		var err error
		body, _, err = fetchKey(ctx, t.client, u, "application/json", 256<<20, t.apiKey)
		var se *statusError
		if errors.As(err, &se) && se.status == http.StatusNotFound {
			why := "the target has no fixture API"
			if rd.journal {
				why = "the journal is off (--journal-entries 0) or the target has none"
			}
			c.add("control_reads_unavailable", 1)
			c.notes = append(c.notes, fmt.Sprintf("%s: unavailable, not searched: %s answered 404 (%s)", rd.label, rd.path, why))
			return
		}
		if err != nil {
			c.problems = append(c.problems, fmt.Sprintf("%s: %v", rd.label, err))
			return
		}
		var perr error
		doc, perr = parseJSON(body)
		if perr != nil || doc.get("data") == nil || doc.get("data").kind != 'a' {
			c.problems = append(c.problems, fmt.Sprintf("%s: %s did not answer with {\"object\":\"list\",\"data\":[…]}", rd.label, rd.path))
			c.records = append(c.records, record{id: rd.label + " (raw)", key: "control " + rd.path, parts: []part{{where: "body (raw)", text: string(body)}}})
			return
		}
		recs = controlRecords(rd, doc)
		tmp := &collection{records: recs}
		tmp.correlate(corr)
		seen = tmp.probesSeen
		if !rd.journal {
			break
		}
		n := len(rd.want) - len(missing(seen, rd.want))
		if n != last {
			last, since = n, time.Now()
		}
		// Every /v1 call is journaled once answered, but a target may skip some routes: a count
		// that has held still for a second is final.
		if n == len(rd.want) || (n > 0 && time.Since(since) >= time.Second) || time.Now().After(deadline) || !sleepCtx(ctx, 200*time.Millisecond) {
			break
		}
	}
	items := int64(len(doc.get("data").items))
	c.add("control_reads", 1)
	c.add("control_bytes", int64(len(body)))
	if rd.journal {
		c.add("journal_entries", items)
	} else {
		c.add("fixture_list_entries", items)
	}
	c.records = append(c.records, recs...)
	if !rd.journal {
		c.notes = append(c.notes, fmt.Sprintf("%s: %d fixtures searched", rd.label, items))
		return
	}
	shown := len(rd.want) - len(missing(seen, rd.want))
	c.notes = append(c.notes, fmt.Sprintf("%s: %d entries searched, showing %d of the audit's %d /v1 requests filed there", rd.label, items, shown, len(rd.want)))
	if len(rd.want) > 0 && shown*2 < len(rd.want) {
		c.problems = append(c.problems, fmt.Sprintf("%s shows only %d of the audit's %d /v1 requests filed there: too little to vouch for the rest", rd.label, shown, len(rd.want)))
	}
}

// controlRecords is one record per element of a control read's data, and one for the rest.
func controlRecords(rd controlRead, doc *jnode) []record {
	var recs []record
	what := "fixture"
	if rd.journal {
		what = "entry"
	}
	for i, it := range doc.get("data").items {
		id := fmt.Sprintf("%s %s %d", rd.label, what, i+1)
		if rid := it.get("request_id"); rid != nil && rid.kind == 's' {
			id += " (request " + rid.str + ")"
		}
		recs = append(recs, record{id: id, key: fmt.Sprintf("control %s %d", rd.path, i), parts: flattenParts(it, "data")})
	}
	rest := &jnode{kind: 'o'}
	for _, m := range doc.obj {
		if m.key != "data" {
			rest.obj = append(rest.obj, m)
		}
	}
	if len(rest.obj) > 0 {
		recs = append(recs, record{id: rd.label, key: "control " + rd.path, parts: flattenParts(rest, "")})
	}
	return recs
}

// dropScope deletes the audit's scope (its fixtures, counters and journal) once everything has
// been read; it returns a note when that failed. The request carries no canary.
func (t *traffic) dropScope() []string {
	sent := false
	for _, p := range t.probes {
		sent = sent || (p.Reached && p.Header.Get(headerScope) == t.scope)
	}
	if !sent {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, t.base+"/_mock/scopes/"+url.PathEscape(t.scope), nil)
	if err != nil {
		return []string{"the audit's scope " + t.scope + " was not deleted: " + err.Error()}
	}
	req.Header.Set("User-Agent", userAgent)
	if t.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+t.apiKey)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return []string{"the audit's scope " + t.scope + " was not deleted: " + unwrapURLError(err).Error()}
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return []string{fmt.Sprintf("the audit's scope %s was not deleted: DELETE /_mock/scopes/%s answered %d", t.scope, t.scope, resp.StatusCode)}
	}
	return nil
}
