package models

import (
	"context"
	"fmt"
	"strings"

	"github.com/assent-hq/assent/internal/secretkey"
)

// Purposes the secret columns are sealed for: a value copied into another
// column does not open there.
const (
	sealWebhookSecret  = "webhook_endpoints.secret"
	sealCallbackSecret = "callback_secret"
	sealIdempotency    = "idempotency_keys.response_body"
)

// sealedColumn is a column whose values are sealed under the secret key.
type sealedColumn struct {
	table   string
	key     []string // the primary key's columns
	column  string
	purpose string
	binary  bool // a bytes column: compared and written as bytes
}

// sealedColumns are every sealed column; a new one joins here so that
// re-sealing (after a rotation, or of values from before sealing) covers it.
var sealedColumns = append([]sealedColumn{
	{"webhook_endpoints", []string{"id"}, "secret", sealWebhookSecret, false},
	{"webhook_endpoints", []string{"id"}, "previous_secret", sealWebhookSecret, false},
	{"approvals", []string{"id"}, "callback_secret", sealCallbackSecret, false},
	{"collections", []string{"id"}, "callback_secret", sealCallbackSecret, false},
	{"reviews", []string{"id"}, "callback_secret", sealCallbackSecret, false},
	{"idempotency_keys", []string{"organization_id", "principal_id", "idempotency_key"}, "response_body", sealIdempotency, true},
	{"push_keys", []string{"id"}, "private_key", sealPushKey, false},
	{"slack_integrations", []string{"organization_id"}, "signing_secret", sealSlackSigningSecret, false},
	{"slack_integrations", []string{"organization_id"}, "bot_token", sealSlackBotToken, false},
}, keyColumns()...)

// keyColumns are the signing keys' private halves, one column per family.
func keyColumns() []sealedColumn {
	out := make([]sealedColumn, len(keyFamilies))
	for i, f := range keyFamilies {
		out[i] = sealedColumn{f.table, []string{"id"}, "private_key", f.purpose, false}
	}
	return out
}

// ResealSecrets seals every sealed value again under the current key: those
// sealed under an older key of the ring, and values written in clear before
// columns were sealed. It runs after migrations and for
// `assent admin rotate-secret-key`; each value is rewritten only if it
// still holds what was read, so it is safe beside a running service.
func (s *Store) ResealSecrets(ctx context.Context) (int, error) {
	n := 0
	for _, col := range sealedColumns {
		done, err := s.reseal(ctx, col)
		n += done
		if err != nil {
			return n, fmt.Errorf("%s.%s: %w", col.table, col.column, err)
		}
	}
	return n, nil
}

func (s *Store) reseal(ctx context.Context, col sealedColumn) (int, error) {
	db := s.db.WithContext(ctx)
	var rows []map[string]any
	if err := db.Table(col.table).Select(strings.Join(col.key, ", ") + ", " + col.column + " AS value").
		Where(col.column + " IS NOT NULL").Find(&rows).Error; err != nil {
		return 0, err
	}
	n := 0
	for _, row := range rows {
		value := asString(row["value"])
		if value == "" || s.secrets.SealedUnderCurrent(value) {
			continue
		}
		plain, err := s.secrets.Open(col.purpose, value)
		if err != nil {
			if secretkey.IsSealed(value) {
				return n, err // sealed under a key the ring lacks
			}
			plain = value // written before the column was sealed
		}
		var was, resealed any = value, s.secrets.Seal(col.purpose, plain)
		if col.binary {
			was, resealed = []byte(value), []byte(resealed.(string))
		}
		q := db.Table(col.table).Where(col.column+" = ?", was)
		for _, k := range col.key {
			q = q.Where(k+" = ?", row[k])
		}
		res := q.Update(col.column, resealed)
		if res.Error != nil {
			return n, res.Error
		}
		n += int(res.RowsAffected)
	}
	return n, nil
}

func asString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}
