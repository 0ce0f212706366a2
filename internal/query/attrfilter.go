package query

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// maxResourceIDs is the most matching resources a filter lists by id; with
// more it tests each row's resource through a subquery instead.
const maxResourceIDs = 1000

// resourceSet is the resources a request's resource.* filters match,
// resolved once per request: their ids and, when every one has a
// service.name, those names. The names let the query seek the per-service
// time index (logs_service_time, spans_root_service_start) instead of
// walking every record in the time range: on 200,000 logs from 100 hosts
// (one service each), a page of resource.host.name took 18-36 ms by walking
// and takes 0.5-2 ms so, as service= does (BenchmarkLogsAttrFilter).
type resourceSet struct {
	resolved bool
	ids      []int64
	services []string // nil when some matching resource has no service.name
	many     bool     // more than maxResourceIDs matched: ids is not kept
}

// none reports that resource filters were given and nothing matches them.
func (s resourceSet) none() bool { return s.resolved && !s.many && len(s.ids) == 0 }

// resolveResources finds the resources of schema that every resource.*
// filter in fs matches. The resources table is deduplicated, so it is small
// beside the records.
func (r *Reader) resolveResources(ctx context.Context, schema string, fs []AttrFilter) (resourceSet, error) {
	var w sqlWhere
	for _, f := range fs {
		if f.Resource {
			pred, args := attrPred("attributes", f)
			w.add(pred, args...)
		}
	}
	if len(w.preds) == 0 {
		return resourceSet{}, nil
	}
	rows, err := r.db.QueryContext(ctx, `SELECT id, service_name FROM `+schema+`.resources WHERE `+w.String()+
		` LIMIT `+strconv.Itoa(maxResourceIDs+1), w.args...)
	if err != nil {
		return resourceSet{}, fmt.Errorf("resolve resource filters: %w", err)
	}
	defer rows.Close()
	s := resourceSet{resolved: true, services: []string{}}
	seen := map[string]bool{}
	for rows.Next() {
		var id int64
		var svc *string
		if err := rows.Scan(&id, &svc); err != nil {
			return resourceSet{}, fmt.Errorf("resolve resource filters: %w", err)
		}
		s.ids = append(s.ids, id)
		switch {
		case svc == nil:
			s.services = nil
		case s.services != nil && !seen[*svc]:
			seen[*svc] = true
			s.services = append(s.services, *svc)
		}
	}
	if err := rows.Err(); err != nil {
		return resourceSet{}, fmt.Errorf("resolve resource filters: %w", err)
	}
	if len(s.ids) > maxResourceIDs {
		s = resourceSet{resolved: true, many: true}
	}
	return s, nil
}

// preds adds the resource filters of fs to w: by the resolved ids (and
// their services, on svcCol), or, unresolved or too many, by a subquery
// on schema's resources.
func (s resourceSet) preds(w *sqlWhere, resCol, svcCol, schema string, fs []AttrFilter) {
	if !s.resolved || s.many {
		var res sqlWhere
		for _, f := range fs {
			if f.Resource {
				pred, args := attrPred("attributes", f)
				res.add(pred, args...)
			}
		}
		if len(res.preds) > 0 {
			w.add(resCol+" IN (SELECT id FROM "+schema+".resources WHERE "+res.String()+")", res.args...)
		}
		return
	}
	ids := make([]string, len(s.ids))
	for i, id := range s.ids {
		ids[i] = strconv.FormatInt(id, 10)
	}
	w.add(resCol + " IN (" + strings.Join(ids, ",") + ")")
	if len(s.services) > 0 {
		servicePred(w, svcCol, s.services)
	}
}

// addRecordAttrPreds adds the attr.* filters of fs on the JSON attribute map
// in col. No index serves them: they are tested on each row the rest of the
// query visits.
func addRecordAttrPreds(w *sqlWhere, col string, fs []AttrFilter) {
	for _, f := range fs {
		if !f.Resource {
			pred, args := attrPred(col, f)
			w.add(pred, args...)
		}
	}
}
