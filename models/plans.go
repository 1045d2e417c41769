package models

import (
	"context"
	"strings"

	"gorm.io/gorm"
)

// explainKey marks, in a query's context, the name its plan is read as.
type explainKey struct{}

// ExplainAs marks the queries run with the returned context as name's, for
// ExplainQueries.
func ExplainAs(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, explainKey{}, name)
}

// ExplainQueries has the database explain each query (Find, Take, Rows)
// run on db with a context ExplainAs marked, after it ran, passing its
// name, its SQL and PostgreSQL's plan to each: the store's own statements,
// byte for byte.
// For the plan test and the load tool (cmd/assent-load).
func ExplainQueries(db *gorm.DB, each func(name, sql, plan string, err error)) error {
	explainEach := func(q *gorm.DB) {
		name, ok := q.Statement.Context.Value(explainKey{}).(string)
		if !ok || q.Error != nil {
			return
		}
		sql := q.Dialector.Explain(q.Statement.SQL.String(), q.Statement.Vars...)
		// On the query's own connection, a transaction's included; the
		// EXPLAIN itself is not explained.
		plan, err := explain(q.Session(&gorm.Session{NewDB: true,
			Context: context.WithValue(q.Statement.Context, explainKey{}, nil)}), sql)
		each(name, sql, plan, err)
	}
	if err := db.Callback().Row().After("gorm:row").Register("assent:explain", explainEach); err != nil {
		return err
	}
	return db.Callback().Query().After("gorm:query").Register("assent:explain", explainEach)
}

func explain(db *gorm.DB, sql string) (string, error) {
	rows, err := db.Raw("EXPLAIN " + sql).Rows()
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n"), rows.Err()
}
