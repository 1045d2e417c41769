package tracing

import (
	"errors"
	"strings"

	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
)

// GORM is a plugin giving each statement run inside a trace a client
// span: the operation and table as its name ("SELECT approvals"), the
// statement with its placeholders, never its values. gorm.io's own
// plugin links the MySQL and ClickHouse drivers, so this is ours.
func GORM() gorm.Plugin { return gormPlugin{} }

type gormPlugin struct{}

func (gormPlugin) Name() string { return "assent:tracing" }

const gormSpanKey = "assent:tracing:span"

func (gormPlugin) Initialize(db *gorm.DB) error {
	system := semconv.DBSystemNameSQLite
	if db.Dialector.Name() == "postgres" {
		system = semconv.DBSystemNamePostgreSQL
	}
	before := func(tx *gorm.DB) {
		ctx := tx.Statement.Context
		if !Enabled() || ctx == nil || !trace.SpanFromContext(ctx).IsRecording() {
			return
		}
		_, span := tracer().Start(ctx, "db", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(system))
		tx.InstanceSet(gormSpanKey, span)
	}
	after := func(tx *gorm.DB) {
		v, ok := tx.InstanceGet(gormSpanKey)
		if !ok {
			return
		}
		span := v.(trace.Span)
		sql := tx.Statement.SQL.String()
		op, _, _ := strings.Cut(strings.TrimSpace(sql), " ")
		op = strings.ToUpper(op)
		name := op
		if tx.Statement.Table != "" {
			name += " " + tx.Statement.Table
			span.SetAttributes(semconv.DBCollectionName(tx.Statement.Table))
		}
		if name != "" {
			span.SetName(name)
		}
		span.SetAttributes(semconv.DBOperationName(op), semconv.DBQueryText(sql))
		if err := tx.Error; err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
			fail(span, err)
		}
		span.End()
	}
	cb := db.Callback()
	regs := []struct {
		kind          string
		before, after interface {
			Register(string, func(*gorm.DB)) error
		}
	}{
		{"create", cb.Create().Before("gorm:create"), cb.Create().After("gorm:create")},
		{"query", cb.Query().Before("gorm:query"), cb.Query().After("gorm:query")},
		{"update", cb.Update().Before("gorm:update"), cb.Update().After("gorm:update")},
		{"delete", cb.Delete().Before("gorm:delete"), cb.Delete().After("gorm:delete")},
		{"row", cb.Row().Before("gorm:row"), cb.Row().After("gorm:row")},
		{"raw", cb.Raw().Before("gorm:raw"), cb.Raw().After("gorm:raw")},
	}
	for _, r := range regs {
		if err := r.before.Register("tracing:before_"+r.kind, before); err != nil {
			return err
		}
		if err := r.after.Register("tracing:after_"+r.kind, after); err != nil {
			return err
		}
	}
	return nil
}
